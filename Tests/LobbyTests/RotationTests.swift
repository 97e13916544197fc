import BeaconFrames
import BeaconKeys
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Rotating identities (issue 22): a player's identity changes every period and only the lobby
/// maps it back; a location's proves presence only in its own period.
@Suite struct RotationTests {
    static func sighting(_ beacon: BeaconIdentity, at time: Date) -> EncounterReport {
        EncounterReport(beacon, distance: 1, at: time)
    }

    func id(_ lobby: TestLobby, _ username: String) async throws -> Int64 {
        try #require(try await lobby.store.database.read { db in try Query.player(db, username: username) }?.id)
    }

    @Test func aPlayersIdentityChangesEveryPeriodAndResolvesAcrossOneBoundaryOnly() async throws {
        let lobby = try await TestLobby { $0.rotationPeriod = RotationPeriod(seconds: 60)! }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        var heard: [BeaconIdentity] = []
        for _ in 0..<5 {
            heard.append(try await lobby.beacon(of: "bob"))
            lobby.clock.advance(by: 60)
        }
        // No field stays the same from one period to the next, so nothing links them.
        for (a, b) in zip(heard, heard.dropFirst()) { #expect(a.major != b.major && a.minor != b.minor, "\(a) → \(b)") }
        #expect(heard.allSatisfy { $0.uuid == lobby.store.configuration.deploymentUUID && $0.major >= 1 })
        // What the lobby issues is what it resolves: the agent derives the same identity.
        let key = try await lobby.store.beaconKey(bob)
        #expect(key.periodSeconds == 60)
        let now = lobby.store.configuration.rotationPeriod.index(at: lobby.clock.now())
        let derived = RotatingIdentity.player(key.secret, period: now)
        let current = try await lobby.beacon(of: "bob")
        #expect(derived.major == current.major && derived.minor == current.minor)
        #expect(try await lobby.store.beaconKey(bob) == key, "the secret stays the player's")

        // Heard in the last period, asked now (clocks a period apart): bob.
        lobby.store.noteActive(bob)
        #expect(try await lobby.store.resolve(viewer: alice, beacon: heard[4]).username == "bob")
        #expect(try await lobby.store.resolve(viewer: alice, beacon: current).username == "bob")
        // Two periods old: nobody, and a guess spent.
        let old = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: heard[3])
        }
        #expect(old?.code == .beaconNotFound)
        // A report names what was heard when: bob's identity of 90 s ago counts for then.
        let report = try await lobby.store.recordEncounters(reporter: alice, [Self.sighting(heard[4], at: lobby.clock.now().addingTimeInterval(-30))])
        #expect(report.recorded == 1)
    }

    @Test func staticIdentitiesResolveOnlyInTheMigrationWindow() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let row = try #require(try await lobby.store.database.read { db in try db.fetchOne("SELECT beaconMajor, beaconMinor FROM player WHERE id = ?", bob) })
        let uuid = lobby.store.configuration.deploymentUUID
        let (major, minor) = (try row.get(0, as: Int.self), try row.get(1, as: Int.self))
        lobby.store.noteActive(bob)
        // A new deployment never advertised static identities: they name nobody.
        await #expect(throws: LobbyError.self) { try await lobby.store.resolve(viewer: alice, beacon: BeaconIdentity(uuid: uuid, major: major, minor: minor)!) }

        // A deployment that upgraded an hour ago, with a day's grace: they resolve until it ends.
        let since = lobby.clock.now().addingTimeInterval(-3600).timeIntervalSince1970
        try await lobby.store.database.write { db in
            try db.execute("INSERT INTO lobbySetting (name, value) VALUES ('staticIdentitiesSince', ?)", since)
        }
        var configuration = lobby.store.configuration
        configuration.staticIdentityGrace = 86400
        let upgraded = try await lobby.reopen(configuration: configuration)
        upgraded.noteActive(bob)
        #expect(try await upgraded.resolve(viewer: alice, beacon: BeaconIdentity(uuid: uuid, major: major, minor: minor)!).username == "bob")
        lobby.clock.advance(by: 86400 - 3600)
        upgraded.noteActive(bob)
        await #expect(throws: LobbyError.self) { try await upgraded.resolve(viewer: alice, beacon: BeaconIdentity(uuid: uuid, major: major, minor: minor)!) }
        // The rotating one still does.
        let current = try await lobby.beacon(of: "bob")
        #expect(try await upgraded.resolve(viewer: alice, beacon: current).username == "bob")
    }

    /// Two secrets whose player identities are the same in `period`: the birthday bound makes
    /// it about 77,000 draws.
    static func collidingSecrets(period: Int64) -> (BeaconSecret, BeaconSecret) {
        var seen: [UInt32: BeaconSecret] = [:]
        while true {
            let secret = BeaconSecret.random()
            let (major, minor) = RotatingIdentity.player(secret, period: period)
            let key = RotatingIdentity.key(major: major, minor: minor)
            if let other = seen[key] { return (other, secret) }
            seen[key] = secret
        }
    }

    @Test func collidingIdentitiesAreAnsweredByWhomTheViewerMetOrNotAtAll() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        let period = lobby.store.configuration.rotationPeriod.index(at: lobby.clock.now())
        let (first, second) = Self.collidingSecrets(period: period)
        for (id, secret) in [(bob, first), (carol, second)] {
            try await lobby.store.database.write { db in
                try db.execute("UPDATE player SET beaconSecret = ? WHERE id = ?", Data(secret.bytes), id)
            }
            lobby.store.identities.add(.player, id, secret: secret)
            lobby.store.noteActive(id)
        }
        let shared = try await lobby.beacon(of: "bob")
        #expect(shared == (try await lobby.beacon(of: "carol")))
        let ambiguous = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: shared)
        }
        #expect(ambiguous?.code == .ambiguousIdentity && ambiguous?.kind == .conflict)
        #expect(try await lobby.store.recordEncounters(reporter: alice, [Self.sighting(shared, at: lobby.clock.now())]).recorded == 0,
                "neither is recorded on a guess")
        // Alice met bob before: the one she met is the one she hears.
        let before = lobby.clock.now().addingTimeInterval(-7200).timeIntervalSince1970
        try await lobby.store.database.write { db in
            try db.execute("INSERT INTO encounter (observerId, seenId, lastSeenAt, distance) VALUES (?, ?, ?, 1)", alice, bob, before)
        }
        #expect(try await lobby.store.resolve(viewer: alice, beacon: shared).username == "bob")
        #expect(try await lobby.store.recordEncounters(reporter: alice, [Self.sighting(shared, at: lobby.clock.now())]).recorded == 1)
        // The next period parts them.
        lobby.clock.advance(by: Double(lobby.store.configuration.rotationPeriod.seconds))
        #expect(try await lobby.beacon(of: "bob") != (try await lobby.beacon(of: "carol")))
    }

    @Test func aRecordedLocationIdentityProvesNothingInTheNextPeriod() async throws {
        let lobby = try await TestLobby {
            $0.rotationPeriod = RotationPeriod(seconds: 60)!
            $0.presenceReportWindow = 10
        }
        let (owner, _) = try await lobby.player("owner")
        let (honest, _) = try await lobby.player("honest")
        let (mallory, _) = try await lobby.player("mallory")
        let location = try await lobby.store.registerLocation(owner, name: "Hall").location
        let tournament = try #require(location.tournaments.first)
        lobby.clock.advance(by: 5)
        // Mallory's accomplice records the beacon at the hall; honest is there and says so at once.
        let recorded = try #require(try await lobby.store.currentLocationBeacon(location.id, at: lobby.clock.now()))
        #expect(recorded.uuid == lobby.store.locationUUID && recorded.uuid != lobby.store.configuration.deploymentUUID)
        #expect(try await lobby.store.recordEncounters(reporter: honest, [Self.sighting(recorded, at: lobby.clock.now())]).recorded == 1)
        #expect(try await lobby.store.joinTournament(honest, tournament: tournament.id).created)
        // Any player near it can look the location up by what it advertises.
        #expect(try await lobby.store.resolveLocation(viewer: honest, beacon: recorded).id == location.id)

        // The next period (past the 10 s its identity is still taken after it), from elsewhere:
        // the recording is refused, with the reason.
        lobby.clock.advance(by: 70)
        try await lobby.store.markOnAir(owner, location: location.id)
        let replayed = try await lobby.store.recordEncounters(reporter: mallory, [Self.sighting(recorded, at: lobby.clock.now())])
        #expect(replayed.recorded == 0 && replayed.refused == [SightingRefusal(index: 0, reason: .expiredIdentity)], "\(replayed)")
        let refused = await #expect(throws: LobbyError.self) { try await lobby.store.joinTournament(mallory, tournament: tournament.id) }
        #expect(refused?.code == .notNearLocation)
        await #expect(throws: LobbyError.self) {
            try await lobby.store.resolveLocation(viewer: mallory, beacon: recorded)
        }
        // Relayed live but reported late (heard 20 s ago, the window is 10 s): refused too.
        let live = try #require(try await lobby.store.currentLocationBeacon(location.id, at: lobby.clock.now()))
        let late = try await lobby.store.recordEncounters(reporter: mallory, [Self.sighting(live, at: lobby.clock.now().addingTimeInterval(-20))])
        #expect(late.refused == [SightingRefusal(index: 0, reason: .lateReport)], "\(late)")
        // Within the window after its period ends, an honest late report still counts.
        lobby.clock.advance(by: 120 + 3 - 75)
        #expect(try await lobby.store.recordEncounters(reporter: honest, [Self.sighting(live, at: lobby.clock.now().addingTimeInterval(-4))]).recorded == 1)
    }

    @Test func keysAreIssuedToTheirOwnersOnlyAndToOldPlayersAtSignIn() async throws {
        let lobby = try await TestLobby()
        let (owner, _) = try await lobby.player("owner")
        let (stranger, _) = try await lobby.player("stranger")
        let location = try await lobby.store.registerLocation(owner, name: "Hall").location
        let key = try await lobby.store.locationBeaconKey(owner, location: location.id)
        #expect(key.locationUUID == lobby.store.locationUUID && key.uuid == lobby.store.configuration.deploymentUUID)
        let other = await #expect(throws: LobbyError.self) { try await lobby.store.locationBeaconKey(stranger, location: location.id) }
        #expect(other?.kind == .notFound)
        #expect(try await lobby.store.beaconKey(owner).secret != (try await lobby.store.beaconKey(stranger)).secret)
        // A player from before rotation has no secret until it signs in.
        try await lobby.store.database.write { db in try db.execute("UPDATE player SET beaconSecret = NULL WHERE id = ?", stranger) }
        _ = try await lobby.store.logIn(username: "stranger", password: "password-123")
        #expect(try await lobby.store.database.read { db in try db.fetchValue(Data.self, "SELECT beaconSecret FROM player WHERE id = ?", stranger) }?.count == 32)
    }
}
