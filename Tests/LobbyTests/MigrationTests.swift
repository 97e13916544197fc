import Foundation
import GRDB
import Testing
@testable import Lobby

@Suite struct MigrationTests {
    /// A v1 database keeps its games through v2: rounds take the catalog's names and plans, and
    /// the scores still point at them.
    @Test func v2KeepsV1RoundsUnderTheCatalogsNames() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lobby.sqlite").path
        let v1 = try DatabaseQueue(path: path)
        try LobbyMigrations.migrator.migrate(v1, upTo: "v1: players, sessions, encounters, games, rewards, events")
        try v1.write { db in
            try db.execute(sql: """
                INSERT INTO player (id, username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, createdAt)
                    VALUES (1, 'alice', 'A', 'L', 'a@example.org', 'x', 1, 0, 0), (2, 'bob', 'B', 'L', 'b@example.org', 'x', 1, 1, 0);
                INSERT INTO game (id, inviterId, state, createdAt, expiresAt, openedAt) VALUES (1, 1, 'open', 0, 86400, 0);
                INSERT INTO membership (gameId, playerId, role, response) VALUES (1, 1, 'inviter', 'accepted'), (1, 2, 'invitee', 'accepted');
                INSERT INTO round (gameId, n, minigame) VALUES (1, 1, 'shake'), (1, 2, 'tilt'), (1, 3, 'shout'), (1, 4, 'quickdraw');
                INSERT INTO score (gameId, n, playerId, score, key, submittedAt) VALUES (1, 1, 1, 40, 'k', 0);
                """)
        }
        try v1.close()

        let store = try LobbyStore(path: path)
        let rounds = try store.grdbPool.read { db in try Query.rounds(db.sql, game: 1) }
        #expect(rounds.map(\.minigame) == ["shaker", "statue", "screamer", "quickdraw"])
        #expect(rounds.map(\.duration) == [10, 10, 5, 8])
        // v8 hides Quickdraw's signal from the plan until it is revealed.
        #expect(rounds.allSatisfy { $0.signalTime == nil })
        let delays = try store.grdbPool.read { db in try Double?.fetchAll(db, sql: "SELECT signalDelay FROM round WHERE gameId = 1 ORDER BY n") }
        #expect(delays.prefix(3).allSatisfy { $0 == nil })
        #expect((2.0...5.0).contains(try #require(delays[3])))
        let (danglingKeys, score) = try store.grdbPool.read { db in
            (try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count, try Int.fetchOne(db, sql: "SELECT score FROM score WHERE gameId = 1 AND n = 1"))
        }
        #expect(danglingKeys == 0)
        #expect(score == 40)
    }
}
