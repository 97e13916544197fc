import BeaconFrames
import DatabaseTestSupport
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Two stores on one PostgreSQL database, as two lobby instances: what one commits or learns, the
/// other knows.
@Suite struct SharedStoreTests {
    /// Two stores on a new database, with cheap hashing and players established.
    static func twoInstances() async throws -> (LobbyStore, LobbyStore, ManualClock) {
        let server = try await PrivatePostgres.shared()
        let url = try await server.createDatabase()
        var configuration = LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4)
        configuration.newAccountAge = 0
        let clock = ManualClock()
        let first = try await LobbyStore.open(url, configuration: configuration, clock: clock, poolSize: 2)
        let second = try await LobbyStore.open(url, configuration: configuration, clock: clock, poolSize: 2)
        return (first, second, clock)
    }

    static func register(_ store: LobbyStore, _ name: String) async throws -> (id: Int64, token: String, player: Player) {
        let player = try await store.register(Registration(username: name, firstName: "S", lastName: "I", email: "\(name)@example.org", password: "password-123"))
        let token = try await store.logIn(username: name, password: "password-123").token
        return (try await store.authenticate(token: token), token, player)
    }

    static func eventually(_ what: String, within limit: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within \(limit): \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func anEventCommittedOnOneInstanceIsPushedOnTheOtherInOrder() async throws {
        let (first, second, clock) = try await Self.twoInstances()
        defer { try? first.close(); try? second.close() }
        let alice = try await Self.register(first, "alice")
        let bob = try await Self.register(first, "bob")
        let live = second.events.subscribe(playerId: bob.id)
        // Bob is on the second instance's air; Alice reports him on the first and invites him there.
        second.noteActive(bob.id)
        try await Self.eventually("bob's activity reaches the database") {
            try await first.database.read { db in try db.fetchValue(Double.self, "SELECT activeAt FROM player WHERE id = ?", bob.id) } != nil
        }
        let beacon = second.currentBeacon(try await second.database.read { db in try Query.player(db, id: bob.id)! }, at: clock.now())
        _ = try await first.recordEncounters(reporter: alice.id, [
            EncounterReport(beacon, distance: 1, at: clock.now()),
        ])
        let invitation = try await first.invite(alice.id, usernames: ["bob"])
        _ = try await second.decline(bob.id, invitation: invitation.id)
        // Bob's own feed holds the invitation; the answer goes to Alice.
        let stored = try await second.events(bob.id, after: 0).map(\.cursor)
        #expect(!stored.isEmpty)
        var pushed: [Int64] = []
        for await event in live {
            pushed.append(event.cursor)
            if pushed.count == stored.count { break }
        }
        #expect(pushed == stored)
    }

    @Test func aPlayerRegisteredOnOneInstanceResolvesOnTheOther() async throws {
        let (first, second, clock) = try await Self.twoInstances()
        defer { try? first.close(); try? second.close() }
        let alice = try await Self.register(second, "alice")
        let carol = try await Self.register(first, "carol")
        let beacon = carol.player.beacon
        // The second instance learns Carol's secret from the first's announcement.
        try await Self.eventually("carol's identity resolves on the second instance") {
            let owners = second.identities.owners(.player, major: beacon.major, minor: beacon.minor,
                                                  in: second.configuration.rotationPeriod.index(at: clock.now())...second.configuration.rotationPeriod.index(at: clock.now()),
                                                  now: clock.now())
            return owners.contains { $0.id == carol.id }
        }
        let receipt = try await second.recordEncounters(reporter: alice.id, [
            EncounterReport(beacon, distance: 1, at: clock.now()),
        ])
        #expect(receipt.recorded == 1)
    }

    @Test func aSessionEndedOnOneInstanceIsRefusedOnTheOther() async throws {
        let (first, second, _) = try await Self.twoInstances()
        defer { try? first.close(); try? second.close() }
        let alice = try await Self.register(first, "alice")
        // The second instance caches the session once it has checked it.
        #expect(try await second.authenticate(token: alice.token) == alice.id)
        try await first.logOut(token: alice.token)
        try await Self.eventually("the logged-out token is refused on the second instance") {
            do {
                _ = try await second.authenticate(token: alice.token)
                return false
            } catch let error as LobbyError {
                return error.code == .invalidToken
            }
        }
    }
}
