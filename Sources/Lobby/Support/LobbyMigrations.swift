import GRDB

/// The schema. Migrations are frozen once shipped: change the schema by adding one. Constraints live
/// here, not only in Swift, so that no code path can break them. Times are REAL seconds since 1970
/// (see SQLTime.swift).
enum LobbyMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: players, sessions, encounters, games, rewards, events") { db in
            try db.create(table: "player") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("username", .text).unique().collate(.nocase)
                    .check(sql: "username IS NULL OR length(username) BETWEEN 3 AND 32")
                t.column("firstName", .text)
                t.column("lastName", .text)
                t.column("email", .text).unique().collate(.nocase)
                t.column("passwordHash", .text)
                t.column("beaconMajor", .integer).notNull().check(sql: "beaconMajor BETWEEN 0 AND 65535")
                t.column("beaconMinor", .integer).notNull().check(sql: "beaconMinor BETWEEN 0 AND 65535")
                t.column("photoVersion", .integer).notNull().defaults(to: 0)
                t.column("createdAt", .double).notNull()
                t.column("deletedAt", .double)
                t.uniqueKey(["beaconMajor", "beaconMinor"])
                t.check(sql: """
                    deletedAt IS NOT NULL OR (username IS NOT NULL AND email IS NOT NULL \
                    AND passwordHash IS NOT NULL AND firstName IS NOT NULL AND lastName IS NOT NULL)
                    """)
            }
            try db.create(table: "photo") { t in
                t.primaryKey("playerId", .integer).references("player")
                t.column("contentType", .text).notNull().check(sql: "contentType IN ('image/jpeg', 'image/png')")
                t.column("bytes", .blob).notNull()
            }
            try db.create(table: "session") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("player", onDelete: .cascade).notNull()
                t.column("tokenHash", .blob).notNull().unique()
                t.column("createdAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
            }
            try db.create(table: "encounter") { t in
                t.column("observerId", .integer).notNull().references("player")
                t.column("seenId", .integer).notNull().references("player")
                t.column("lastSeenAt", .double).notNull()
                t.column("distance", .double)
                t.primaryKey(["observerId", "seenId"])
                t.check(sql: "observerId <> seenId")
            }
            try db.create(table: "block") { t in
                t.column("blockerId", .integer).notNull().references("player")
                t.column("blockedId", .integer).notNull().references("player")
                t.column("createdAt", .double).notNull()
                t.primaryKey(["blockerId", "blockedId"])
                t.check(sql: "blockerId <> blockedId")
            }
            try db.create(table: "unlock") { t in
                t.column("ownerId", .integer).notNull().references("player")
                t.column("unlockedId", .integer).notNull().references("player")
                t.column("persistent", .boolean).notNull()
                t.column("since", .double).notNull()
                t.primaryKey(["ownerId", "unlockedId"])
                t.check(sql: "ownerId <> unlockedId")
            }
            try db.create(table: "game") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("inviterId", .integer).notNull().references("player")
                t.column("state", .text).notNull()
                    .check(sql: "state IN ('pending', 'open', 'finished', 'cancelled')")
                t.column("createdAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
                t.column("openedAt", .double)
                t.column("finishedAt", .double)
                t.column("winnerId", .integer).references("player")
                t.check(sql: "winnerId IS NULL OR state = 'finished'")
            }
            try db.create(index: "game_pending_expiry", on: "game", columns: ["state", "expiresAt"])
            try db.create(table: "membership") { t in
                t.column("gameId", .integer).notNull().references("game")
                t.column("playerId", .integer).notNull().references("player")
                t.column("role", .text).notNull().check(sql: "role IN ('inviter', 'invitee')")
                t.column("response", .text).notNull()
                    .check(sql: "response IN ('pending', 'accepted', 'declined', 'expired')")
                t.column("respondedAt", .double)
                t.primaryKey(["gameId", "playerId"])
                t.check(sql: "role = 'invitee' OR response = 'accepted'")
            }
            try db.create(index: "membership_player", on: "membership", columns: ["playerId", "response"])
            try db.create(table: "round") { t in
                t.column("gameId", .integer).notNull().references("game")
                t.column("n", .integer).notNull().check(sql: "n >= 1")
                t.column("minigame", .text).notNull()
                t.primaryKey(["gameId", "n"])
            }
            try db.create(table: "score") { t in
                t.column("gameId", .integer).notNull()
                t.column("n", .integer).notNull()
                t.column("playerId", .integer).notNull()
                t.column("score", .integer).notNull().check(sql: "score >= 0")
                t.column("key", .text).notNull().check(sql: "length(key) BETWEEN 1 AND 128")
                t.column("submittedAt", .double).notNull()
                t.primaryKey(["gameId", "n", "playerId"])
                t.foreignKey(["gameId", "n"], references: "round")
                t.foreignKey(["gameId", "playerId"], references: "membership")
            }
            try db.create(table: "event") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("playerId", .integer).notNull().references("player")
                t.column("at", .double).notNull()
                t.column("kind", .text).notNull()
                t.column("payload", .text).notNull()
            }
            try db.create(index: "event_player", on: "event", columns: ["playerId", "id"])
        }
        return migrator
    }
}
