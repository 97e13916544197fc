import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import LobbyClient
import Testing
@testable import LobbyServer

/// Tier 3: the real `LobbyClient` against a live server.
@Suite struct ClientTests {
    @Test func aWholeGameThroughTheClient() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            #expect(try await base.health())
            let alicePlayer = try await base.register(username: "alice", firstName: "Alice", lastName: "A", email: "alice@example.org", password: "password-123")
            let bobPlayer = try await base.register(username: "bob", firstName: "Bob", lastName: "B", email: "bob@example.org", password: "password-123")
            #expect(alicePlayer.beacon != bobPlayer.beacon)
            let alice = base.authenticated(try await base.logIn(username: "alice", password: "password-123").token)
            let bob = base.authenticated(try await base.logIn(username: "bob", password: "password-123").token)
            #expect(try await alice.me().username == "alice")
            #expect(try await alice.updateMe(firstName: "Alicia").firstName == "Alicia")

            let profile = try await alice.resolve(try #require(bobPlayer.beacon.beaconIdentity))
            #expect(profile.username == "bob")
            let receipt = try await alice.reportEncounters([
                EncounterSighting(uuid: bobPlayer.beacon.uuid, major: bobPlayer.beacon.major, minor: bobPlayer.beacon.minor, distance: 0.8, at: Date()),
            ])
            #expect(receipt.recorded == 1)
            #expect(try await alice.statistics(of: "bob").gamesPlayed == 0)

            let invitation = try await alice.invite(["bob", "ghost"])
            #expect(invitation.invitees.map(\.username) == ["bob"])
            #expect(invitation.excluded.map(\.reason) == [.unknownPlayer])
            #expect(try await bob.invitations().map(\.id) == [invitation.id])
            #expect(try await bob.accept(invitation: invitation.id).state == .open)

            for n in 1...3 {
                try await alice.submitHonestly(game: invitation.id, round: n, score: 100 * n, key: "alice-\(n)")
                try await bob.submitHonestly(game: invitation.id, round: n, score: 50 * n, key: "bob-\(n)")
            }
            // A retry with the same key is answered, not refused.
            let game = try await bob.submitHonestly(game: invitation.id, round: 3, score: 150, key: "bob-3")
            #expect(game.state == .finished)
            #expect(game.winner == "alice")
            #expect(game.rounds.map { $0.scores["alice"] } == [100, 200, 300])
            #expect(try await alice.games().map(\.id) == [invitation.id])
            #expect(Set(try await bob.unlocked()) == [UnlockedPlayer(username: "alice", persistent: true)])

            let page = try await bob.events(after: 0)
            #expect(page.events.first?.kind == "invitationReceived")
            #expect(page.events.last?.kind == "unlocked")
            #expect(try await bob.events(after: page.next).events.isEmpty)

            try await bob.block("alice")
            await #expect(throws: LobbyClientError.self) { try await alice.resolve(try #require(bobPlayer.beacon.beaconIdentity)) }
            try await bob.unblock("alice")

            let refused = await #expect(throws: LobbyClientError.self) { try await alice.invite(["alice"]) }
            #expect(refused?.status == 409)
            #expect(refused?.excluded.first?.reason == .yourself)
            try await bob.deleteMe()
            let gone = await #expect(throws: LobbyClientError.self) { try await bob.me() }
            #expect(gone?.status == 401)
        }
    }
}
