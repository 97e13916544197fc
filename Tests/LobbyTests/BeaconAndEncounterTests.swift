import BeaconFrames
import Foundation
import Testing
@testable import Lobby

@Suite struct BeaconAndEncounterTests {
    @Test func resolvesABeaconToThePublicProfile() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let bob = try await lobby.player("bob").player
        let profile = try await lobby.store.resolve(viewer: alice, beacon: bob.beacon)
        #expect(profile.username == "bob")
        #expect(profile.stats.gamesPlayed == 0)
    }

    @Test func neverResolvesForSomeoneThePlayerBlocked() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        try await lobby.store.block(bob, username: "alice")
        let beacon = bobPlayer.beacon
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: beacon)
        }
        #expect(error?.kind == .notFound)
        try await lobby.store.unblock(bob, username: "alice")
        _ = try await lobby.store.resolve(viewer: alice, beacon: beacon)
    }

    @Test func ignoresOtherDeploymentsAndUnknownIdentities() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let bob = try await lobby.player("bob").player
        let receipt = try await lobby.store.recordEncounters(reporter: alice, [
            EncounterReport(bob.beacon, distance: 2, at: lobby.clock.now()),
            EncounterReport(BeaconIdentity(uuid: UUID(), major: bob.beacon.major, minor: bob.beacon.minor)!, distance: 2, at: lobby.clock.now()),
            EncounterReport(BeaconIdentity(uuid: bob.beacon.uuid, major: 999, minor: 999)!, distance: nil, at: lobby.clock.now()),
        ])
        #expect(receipt == EncounterReceipt(recorded: 1, ignored: 2))
        // A major out of range cannot be an identity: the report refuses it as it decodes, naming
        // the field by its path in the body.
        struct Body: Decodable { var sightings: [EncounterReport] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let body = #"{"sightings": [{"uuid": "\#(bob.beacon.uuid)", "major": 70000, "minor": 0, "at": "2026-01-01T00:00:00Z"}]}"#
        let bad = #expect(throws: LobbyError.self) { try decoder.decode(Body.self, from: Data(body.utf8)) }
        #expect(bad?.code == .invalidField && bad?.message.hasPrefix("sightings[0].major") == true, "\(String(describing: bad))")
    }

    @Test func statisticsAreVisibleOnlyWhileSeenWithinTheWindow() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        try await lobby.player("bob")
        let hidden = await #expect(throws: LobbyError.self) { try await lobby.store.stats(viewer: alice, username: "bob") }
        #expect(hidden?.code == .notNearby)
        try await lobby.see(alice, "bob")
        _ = try await lobby.store.stats(viewer: alice, username: "bob")
        lobby.clock.advance(by: 10 * 60 + 1)
        await #expect(throws: LobbyError.self) { try await lobby.store.stats(viewer: alice, username: "bob") }
    }

    @Test func statisticsCoverOnlyTheConfiguredSpan() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        _ = try await lobby.play(game, [alice: [5, 5, 5], bob: [1, 9, 1]])
        // They unlocked each other by playing, so the statistics stay visible without encounters.
        var stats = try await lobby.store.stats(viewer: bob, username: "alice")
        #expect(stats.gamesPlayed == 1)
        #expect(stats.gamesWon == 1)
        #expect(stats.roundsWon == 2)
        #expect(stats.bestScore == 5)
        lobby.clock.advance(by: 31 * 86400)
        stats = try await lobby.store.stats(viewer: bob, username: "alice")
        #expect(stats.gamesPlayed == 0)
    }
}
