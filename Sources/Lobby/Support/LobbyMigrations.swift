import GRDB
import LobbyDatabase

/// The schema. Migrations are frozen once shipped: change the schema by adding one. Constraints live
/// here, not only in Swift, so that no code path can break them. Times are REAL seconds since 1970
/// (see SQLTime.swift).
enum LobbyMigrations {
    /// PostgreSQL's schema, one migration equal to all of SQLite's below (``PostgresSchema``).
    static var postgres: [SQLMigration] { PostgresSchema.migrations }

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
        // Rounds carry the plan the lobby issued (duration, Quickdraw's signal) and are named as the
        // Minigames catalog names them; scores keep the recording they were verified on; devices'
        // calibrations; idempotency keys of invitations and encounter reports.
        migrator.registerMigration("v2: round plans, recordings, calibrations, request keys") { db in
            // SQLite cannot add a NOT NULL column without a default, so `round` is rebuilt (the
            // documented way: new table, copy, drop, rename; foreign keys are checked at the end).
            // v1's minigame names become the catalog's: shake → shaker, shout → screamer, tilt →
            // statue (holding a pose). The durations are the games' as of this migration.
            try db.execute(sql: """
                CREATE TABLE round_v2 (
                    gameId INTEGER NOT NULL REFERENCES game(id),
                    n INTEGER NOT NULL CHECK (n >= 1),
                    minigame TEXT NOT NULL,
                    duration REAL NOT NULL CHECK (duration > 0),
                    signalTime REAL CHECK (signalTime IS NULL OR (signalTime >= 0 AND signalTime <= duration)),
                    PRIMARY KEY (gameId, n));
                INSERT INTO round_v2 (gameId, n, minigame, duration, signalTime)
                    SELECT gameId, n, name,
                        CASE name WHEN 'screamer' THEN 5.0 WHEN 'quickdraw' THEN 8.0 ELSE 10.0 END,
                        CASE name WHEN 'quickdraw' THEN 2.0 + ((random() & 4194303) % 3000001) / 1000000.0 END
                    FROM (SELECT gameId, n, CASE minigame WHEN 'shake' THEN 'shaker' WHEN 'shout' THEN 'screamer'
                        WHEN 'tilt' THEN 'statue' ELSE minigame END AS name FROM round);
                DROP TABLE round;
                ALTER TABLE round_v2 RENAME TO round;
                """)
            try db.create(table: "recording") { t in
                t.column("gameId", .integer).notNull()
                t.column("n", .integer).notNull()
                t.column("playerId", .integer).notNull()
                t.column("json", .text).notNull()
                t.primaryKey(["gameId", "n", "playerId"])
                t.foreignKey(["gameId", "n", "playerId"], references: "score")
            }
            try db.create(table: "calibration") { t in
                t.primaryKey("playerId", .integer).references("player")
                t.column("json", .text).notNull()
                t.column("updatedAt", .double).notNull()
            }
            try db.create(table: "invitationKey") { t in
                t.column("inviterId", .integer).notNull().references("player")
                t.column("key", .text).notNull().check(sql: "length(key) BETWEEN 1 AND 128")
                t.column("gameId", .integer).notNull().references("game")
                t.column("excluded", .text).notNull()
                t.column("createdAt", .double).notNull()
                t.primaryKey(["inviterId", "key"])
            }
            try db.create(index: "invitationKey_age", on: "invitationKey", columns: ["createdAt"])
            try db.create(table: "encounterReport") { t in
                t.column("reporterId", .integer).notNull().references("player")
                t.column("key", .text).notNull().check(sql: "length(key) BETWEEN 1 AND 128")
                t.column("recorded", .integer).notNull().check(sql: "recorded >= 0")
                t.column("ignored", .integer).notNull().check(sql: "ignored >= 0")
                t.column("createdAt", .double).notNull()
                t.primaryKey(["reporterId", "key"])
            }
            try db.create(index: "encounterReport_age", on: "encounterReport", columns: ["createdAt"])
        }
        migrator.registerMigration("v3-locations-tournaments", migrate: LocationMigration.v3)
        registerStatistics(&migrator)
        migrator.registerMigration("v4-two-way-readings", migrate: TwoWayMigration.v4)
        migrator.registerMigration("v5-site-profiles", migrate: SiteProfileMigration.v5)
        // The sweeper deletes events by age (`pruneEvents`): without this it would scan the table.
        migrator.registerMigration("v6-event-age") { db in
            try db.create(index: "event_age", on: "event", columns: ["at"])
        }
        // Usernames are compared by their look-alike form (UsernameSkeleton); a deleted player's
        // stays for LobbyConfiguration.usernameReservation so its name is not taken over at once.
        // Not unique: names registered before this migration may already look alike.
        migrator.registerMigration("v7-username-skeletons") { db in
            try db.alter(table: "player") { t in t.add(column: "usernameSkeleton", .text) }
            let rows = try Row.fetchAll(db, sql: "SELECT id, username FROM player WHERE username IS NOT NULL")
            for row in rows {
                let username: String = row["username"]
                try db.execute(sql: "UPDATE player SET usernameSkeleton = ? WHERE id = ?",
                               arguments: [UsernameSkeleton.of(username), row["id"] as Int64])
            }
            try db.create(index: "player_usernameSkeleton", on: "player", columns: ["usernameSkeleton"])
        }
        migrator.registerMigration("v8-fair-play", migrate: FairPlayMigration.v8)
        migrator.registerMigration("v8-score-integrity", migrate: ScoreIntegrityMigration.v8)
        migrator.registerMigration("v9-rotating-identities", migrate: RotationMigration.v9)
        // A location's screen asks who was seen there lately (LobbyStore.locationScreen): without
        // this it would scan every sighting of every location.
        migrator.registerMigration("v10-location-presence") { db in
            try db.create(index: "locationSighting_present", on: "locationSighting", columns: ["locationId", "lastSeenAt"])
        }
        migrator.registerMigration("v11-crowd-calibration", migrate: CrowdCalibrationMigration.v11)
        migrator.registerMigration("v12-beacon-calibration", migrate: BeaconCalibrationMigration.v12)
        return migrator
    }
}
