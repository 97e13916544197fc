import Foundation
import GRDB
import LobbyClient
import Testing

/// `kill -9` during a stream of writes loses nothing that was acknowledged.
@Suite struct CrashSafetyTests {
    @Test(.timeLimit(.minutes(5))) func acknowledgedWritesSurviveKill9AndRulesStillHold() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("lobby.sqlite").path

        // Statue rounds only: a Statue recording can give any score the test picks. Dozens of
        // registrations and sign-ins come from one address: the sign-in throttle would refuse them.
        let arguments = ["--minigames", "statue", "--sign-in-throttle", "off"]
        let first = try await ServerProcess(database: database, folder: folder, arguments: arguments)
        let base = LobbyClient(baseURL: first.url)
        var players: [(name: String, client: LobbyClient, beacon: PlayerBeacon)] = []
        for i in 0..<8 {
            let name = "crash\(i)"
            let player = try await base.register(username: name, firstName: "C", lastName: "R", email: "\(name)@example.org", password: "password-123")
            players.append((name, base.authenticated(try await base.logIn(username: name, password: "password-123").token), player.beacon))
        }
        var games: [(id: Int64, players: [Int])] = []
        for pair in stride(from: 0, to: 8, by: 2) {
            let (a, b) = (players[pair], players[pair + 1])
            _ = try await a.client.reportEncounters([EncounterSighting(uuid: b.beacon.uuid, major: b.beacon.major, minor: b.beacon.minor, distance: 1, at: Date())])
            // New accounts invite only players met both ways.
            _ = try await b.client.reportEncounters([EncounterSighting(uuid: a.beacon.uuid, major: a.beacon.major, minor: a.beacon.minor, distance: 1, at: Date())])
            let invitation = try await a.client.invite([b.name])
            _ = try await b.client.accept(invitation: invitation.id)
            games.append((invitation.id, [pair, pair + 1]))
        }

        let acknowledged = Acknowledged()
        let team = players
        let scheduled = games
        let stream = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Registrations, one after another, until the server dies.
                    for i in 0... {
                        let name = "late\(i)"
                        do {
                            _ = try await base.register(username: name, firstName: "L", lastName: "T", email: "\(name)@example.org", password: "password-123")
                            acknowledged.registered(name)
                        } catch { return }
                    }
                }
                for game in scheduled {
                    for player in game.players {
                        let client = team[player].client
                        group.addTask {
                            for n in 1...3 {
                                let score = 10 * n + player
                                do {
                                    try await client.submitHonestly(game: game.id, round: n, score: score, key: "\(game.id)-\(player)-\(n)")
                                    acknowledged.scored(game.id, team[player].name, n, score)
                                } catch { return }
                                try? await Task.sleep(for: .milliseconds(20 * (player + 1)))
                            }
                        }
                    }
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while acknowledged.registrations.count < 25 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        await first.stop(signal: SIGKILL)
        await stream.value
        let registrations = acknowledged.registrations
        let scores = acknowledged.scores
        #expect(registrations.count >= 25)
        #expect(!scores.isEmpty)

        let second = try await ServerProcess(database: database, folder: folder, arguments: arguments)
        let again = LobbyClient(baseURL: second.url)
        for name in registrations {
            _ = try await again.logIn(username: name, password: "password-123")
        }
        for (gameId, name, n, score) in scores {
            let client = again.authenticated(try await again.logIn(username: name, password: "password-123").token)
            let game = try await client.game(gameId)
            #expect(game.rounds[n - 1].scores[name] == score, "game \(gameId) round \(n) of \(name) lost")
        }
        let status = await second.stop(signal: SIGTERM)
        #expect(status == 0, "SIGTERM should stop the server cleanly; it ended with \(status) (-1: still running 30 s later). Its log: \((try? String(contentsOf: second.output, encoding: .utf8)) ?? "")")

        // The rules hold in the recovered file: intact, no dangling keys, every fully scored game evaluated
        // together with its rewards.
        let queue = try DatabaseQueue(path: database)
        try await queue.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty)
            let complete = try Row.fetchAll(db, sql: """
                SELECT g.id, g.state FROM game g WHERE (SELECT COUNT(*) FROM score s WHERE s.gameId = g.id)
                    = 3 * (SELECT COUNT(*) FROM membership m WHERE m.gameId = g.id AND m.response = 'accepted')
                """)
            for game in complete {
                #expect(game["state"] as String == "finished", "game \(game["id"] as Int64) has every score but is not finished")
                let unlocks = try Int.fetchOne(db, sql: """
                    SELECT COUNT(*) FROM unlock u JOIN membership a ON a.playerId = u.ownerId JOIN membership b ON b.playerId = u.unlockedId
                    WHERE a.gameId = ?1 AND b.gameId = ?1 AND u.persistent
                    """, arguments: [game["id"] as Int64])
                #expect(unlocks == 2)
            }
        }
    }
}

final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    private var scoreList: [(Int64, String, Int, Int)] = []
    func registered(_ name: String) { lock.withLock { names.append(name) } }
    func scored(_ game: Int64, _ name: String, _ n: Int, _ score: Int) { lock.withLock { scoreList.append((game, name, n, score)) } }
    var registrations: [String] { lock.withLock { names } }
    var scores: [(Int64, String, Int, Int)] { lock.withLock { scoreList } }
}
