import Foundation
import LobbyDatabase
import Hummingbird
import HummingbirdTesting
import LobbyClient
import Testing

@Suite struct ConcurrencyTests {
    /// 200 concurrent invitations and acceptances aimed at low limits; afterwards no limit is exceeded
    /// and no pair of players has two open games.
    @Test(.timeLimit(.minutes(5))) func limitsHoldUnder200ConcurrentInvitationsAndAcceptances() async throws {
        let server = try await TestServer {
            $0.maximumOpenGames = 2
            $0.maximumOpenInvitations = 3
        }
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            let names = (0..<16).map { "player\($0)" }
            var clients: [LobbyClient] = []
            var beacons: [PlayerBeacon] = []
            for name in names {
                let player = try await base.register(username: name, firstName: "P", lastName: "Q", email: "\(name)@example.org", password: "password-123")
                clients.append(base.authenticated(try await base.logIn(username: name, password: "password-123").token))
                beacons.append(player.beacon)
            }
            for client in clients {
                _ = try await client.reportEncounters(beacons.map { EncounterSighting(uuid: $0.uuid, major: $0.major, minor: $0.minor, distance: 1, at: Date()) })
            }
            let outcomes = Outcomes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    let client = clients[i % clients.count]
                    group.addTask {
                        if i % 2 == 0 {
                            let invitees = (1...(1 + i % 3)).map { names[(i / 2 + $0 * 5) % names.count] }
                            do { _ = try await client.invite(invitees); outcomes.add("invited") } catch let error as LobbyClientError { outcomes.add(error.code.rawValue) }
                        } else {
                            let pending = (try? await client.invitations())?.filter { $0.invitees.contains { $0.response == .pending } } ?? []
                            guard let invitation = pending.randomElement() else { outcomes.add("nothingToAccept"); return }
                            do { _ = try await client.accept(invitation: invitation.id); outcomes.add("accepted") } catch let error as LobbyClientError { outcomes.add(error.code.rawValue) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counts = outcomes.counts
            #expect(counts["invited", default: 0] > 0)
            #expect(counts["openGameLimitReached", default: 0] + counts["nobodyInvitable", default: 0] > 0, "\(counts)")

            let (openGames, invitations, doubledPairs) = try await server.read { db in
                (try db.fetchAll("""
                    SELECT m.playerId, COUNT(*) AS n FROM membership m JOIN game g ON g.id = m.gameId
                    WHERE m.response = 'accepted' AND g.state IN ('pending', 'open') GROUP BY m.playerId
                    """).map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Int.self)) },
                 try db.fetchAll("""
                    SELECT COUNT(*) FROM membership m JOIN game g ON g.id = m.gameId
                    WHERE m.response = 'pending' AND g.state = 'pending' GROUP BY m.playerId
                    """).map { try $0.get(0, as: Int.self) },
                 try db.fetchValue(Int.self, """
                    SELECT COUNT(*) FROM (
                        SELECT a.playerId, b.playerId FROM membership a JOIN membership b ON b.gameId = a.gameId AND a.playerId < b.playerId
                        JOIN game g ON g.id = a.gameId
                        WHERE g.state IN ('pending', 'open') AND a.response IN ('pending', 'accepted') AND b.response IN ('pending', 'accepted')
                        GROUP BY a.playerId, b.playerId HAVING COUNT(*) > 1) AS doubled
                    """))
            }
            #expect(!openGames.isEmpty)
            for (player, count) in openGames { #expect(count <= 2, "player \(player) has \(count) open games") }
            #expect(invitations.allSatisfy { $0 <= 3 })
            #expect(doubledPairs == 0)
        }
    }
}

final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var tally: [String: Int] = [:]
    func add(_ outcome: String) { lock.withLock { tally[outcome, default: 0] += 1 } }
    var counts: [String: Int] { lock.withLock { tally } }
}
