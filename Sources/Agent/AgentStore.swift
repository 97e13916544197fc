import Foundation
import GRDB
import LobbyClient

/// The agent's durable state in one SQLite file (WAL): the identity cache, the outgoing queue
/// and the lobby event cursor. A write returns only once it is committed, so what the queue
/// accepted survives a SIGKILL.
public final class AgentStore: Sendable {
    let database: DatabaseQueue

    /// Opens (creating if needed) `directory/agent.sqlite`; the folder is made owner-only.
    public init(directory: String) throws(AgentError) {
        try makePrivateDirectory(directory)
        let path = directory + "/agent.sqlite"
        do {
            var configuration = Configuration()
            configuration.journalMode = .wal
            configuration.busyMode = .timeout(5)
            database = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch {
            throw AgentError("Cannot open the agent's state at \(path): \(error). Move the file away if it is damaged; it is only a cache and a queue.", code: "stateUnavailable")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // One row per beacon identity asked about; username NULL means it belongs to nobody we may see.
            try db.execute(sql: """
                CREATE TABLE identity (
                    beacon TEXT PRIMARY KEY NOT NULL,
                    username TEXT,
                    firstName TEXT,
                    lastName TEXT,
                    expiresAt REAL NOT NULL
                );
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL,
                    key TEXT NOT NULL UNIQUE,
                    body BLOB NOT NULL,
                    createdAt REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    lastError TEXT
                );
                CREATE TABLE setting (
                    name TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-radio-offsets") { db in
            // A resolved player's radio offsets, as the lobby solved them from the crowd (all NULL: none).
            try db.execute(sql: """
                ALTER TABLE identity ADD COLUMN transmitOffset REAL;
                ALTER TABLE identity ADD COLUMN receiveOffset REAL;
                ALTER TABLE identity ADD COLUMN transmitError REAL;
                ALTER TABLE identity ADD COLUMN receiveError REAL;
                """)
        }
        return migrator
    }

    // MARK: settings

    func setting(_ name: String) throws -> String? {
        try database.read { try String.fetchOne($0, sql: "SELECT value FROM setting WHERE name = ?", arguments: [name]) }
    }

    func setSetting(_ name: String, _ value: String) throws {
        try database.write {
            try $0.execute(sql: "INSERT INTO setting (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                           arguments: [name, value])
        }
    }

    // MARK: game plans

    /// Remembers a game's rounds (minigame, duration, signal time), so its rounds can be played
    /// while the lobby is away.
    func savePlan(game: Int64, rounds: [LobbyEvent.PlannedRound]) throws {
        try setSetting("plan:\(game)", String(decoding: try JSONEncoder().encode(rounds), as: UTF8.self))
    }

    /// The rounds of `game` as last heard from the lobby, nil when never heard.
    func plan(game: Int64) -> [LobbyEvent.PlannedRound]? {
        guard let text = (try? setting("plan:\(game)")) ?? nil else { return nil }
        return try? JSONDecoder().decode([LobbyEvent.PlannedRound].self, from: Data(text.utf8))
    }
}
