import GRDB

/// Locations, their sightings by players, and their tournaments (frozen once shipped, like every
/// migration in ``LobbyMigrations``).
enum LocationMigration {
    static func v3(_ db: Database) throws {
        // A location's beacon is the deployment UUID, major 0 (never a player's), minor = id.
        try db.create(table: "location") { t in
            t.autoIncrementedPrimaryKey("id").check(sql: "id BETWEEN 1 AND 65535")
            t.column("name", .text).notNull().unique().collate(.nocase).check(sql: "length(name) BETWEEN 1 AND 64")
            t.column("ownerId", .integer).notNull().references("player")
            t.column("timeZone", .text).notNull()
            t.column("createdAt", .double).notNull()
        }
        // The last time each player's agent reported the location's beacon: presence, for joining.
        try db.create(table: "locationSighting") { t in
            t.column("playerId", .integer).notNull().references("player")
            t.column("locationId", .integer).notNull().references("location")
            t.column("lastSeenAt", .double).notNull()
            t.column("distance", .double)
            t.primaryKey(["playerId", "locationId"])
        }
        try db.create(table: "tournament") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("locationId", .integer).notNull().references("location")
            t.column("period", .text).notNull().check(sql: "period IN ('daily', 'weekly', 'monthly')")
            t.column("startsAt", .double).notNull()
            t.column("endsAt", .double).notNull()
            t.column("state", .text).notNull().check(sql: "state IN ('open', 'closed')")
            t.column("closedAt", .double)
            t.column("winnerId", .integer).references("player")
            t.uniqueKey(["locationId", "period", "startsAt"])
            t.check(sql: "endsAt > startsAt")
            t.check(sql: "(state = 'open') = (closedAt IS NULL)")
            t.check(sql: "winnerId IS NULL OR state = 'closed'")
        }
        try db.create(index: "tournament_due", on: "tournament", columns: ["state", "endsAt"])
        // The minigames every entry of a tournament plays, in order.
        try db.create(table: "tournamentRound") { t in
            t.column("tournamentId", .integer).notNull().references("tournament")
            t.column("n", .integer).notNull().check(sql: "n >= 1")
            t.column("minigame", .text).notNull()
            t.column("duration", .double).notNull().check(sql: "duration > 0")
            t.primaryKey(["tournamentId", "n"])
        }
        // `rank` is set when the tournament closes (standard competition ranking on `total`).
        try db.create(table: "tournamentEntry") { t in
            t.column("tournamentId", .integer).notNull().references("tournament")
            t.column("playerId", .integer).notNull().references("player")
            t.column("joinedAt", .double).notNull()
            t.column("total", .integer).notNull().defaults(to: 0).check(sql: "total >= 0")
            t.column("roundsPlayed", .integer).notNull().defaults(to: 0).check(sql: "roundsPlayed >= 0")
            t.column("lastScoredAt", .double)
            t.column("rank", .integer).check(sql: "rank IS NULL OR rank >= 1")
            t.primaryKey(["tournamentId", "playerId"])
        }
        try db.create(index: "tournamentEntry_player", on: "tournamentEntry", columns: ["playerId"])
        // One row per round of an entry: its plan (drawn at joining), then its verified score.
        try db.create(table: "tournamentScore") { t in
            t.column("tournamentId", .integer).notNull()
            t.column("playerId", .integer).notNull()
            t.column("n", .integer).notNull()
            t.column("signalTime", .double)
            t.column("score", .integer).check(sql: "score IS NULL OR score >= 0")
            t.column("key", .text).check(sql: "key IS NULL OR length(key) BETWEEN 1 AND 128")
            t.column("submittedAt", .double)
            t.column("recording", .text)
            t.primaryKey(["tournamentId", "playerId", "n"])
            t.foreignKey(["tournamentId", "playerId"], references: "tournamentEntry")
            t.foreignKey(["tournamentId", "n"], references: "tournamentRound")
            t.check(sql: "(score IS NULL) = (key IS NULL) AND (score IS NULL) = (submittedAt IS NULL)")
        }
    }
}
