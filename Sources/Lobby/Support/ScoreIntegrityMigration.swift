import GRDB

/// Issue 21, point 12: what the lobby keeps to make forged scores harder.
///
/// - `round.signalDelay`: Quickdraw's signal, moved out of `signalTime` (which plans show) so it
///   is revealed only when the round starts; `signalReveal` and `tournamentScore.revealedAt`: the
///   lobby's time of each player's reveal, which a claimed reaction is held to.
/// - `calibrationChange`: when each player changed its stored calibration, for the daily limit.
/// - `scoreEvidence`: one row per verified score, what ``ScoreScrutiny`` reads of a player's
///   history; `playerFlag`: what it found, until an operator clears it; `heldReward`: tournament
///   rewards held from a flagged winner, released when the flag is cleared.
enum ScoreIntegrityMigration {
    static func v8(_ db: Database) throws {
        try db.alter(table: "round") { t in
            t.add(column: "signalDelay", .double)
        }
        try db.execute(sql: "UPDATE round SET signalDelay = signalTime, signalTime = NULL WHERE signalTime IS NOT NULL")
        try db.create(table: "signalReveal") { t in
            t.column("gameId", .integer).notNull()
            t.column("n", .integer).notNull()
            t.column("playerId", .integer).notNull().references("player")
            t.column("revealedAt", .double).notNull()
            t.primaryKey(["gameId", "n", "playerId"])
            t.foreignKey(["gameId", "n"], references: "round")
        }
        try db.alter(table: "tournamentScore") { t in t.add(column: "revealedAt", .double) }
        try db.create(table: "calibrationChange") { t in
            t.column("playerId", .integer).notNull().references("player")
            t.column("at", .double).notNull()
        }
        try db.create(index: "calibrationChange_player", on: "calibrationChange", columns: ["playerId", "at"])
        try db.create(table: "scoreEvidence") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("playerId", .integer).notNull().references("player")
            t.column("minigame", .text).notNull()
            t.column("score", .integer).notNull().check(sql: "score BETWEEN 0 AND 1000")
            // Why the recording has no sensor's fingerprint (``SensorFingerprint``); NULL when it has one.
            t.column("unfingerprinted", .text)
            t.column("at", .double).notNull()
        }
        try db.create(index: "scoreEvidence_player", on: "scoreEvidence", columns: ["playerId", "id"])
        try db.create(table: "playerFlag") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("playerId", .integer).notNull().references("player")
            t.column("reason", .text).notNull().check(sql: "reason IN ('ceiling', 'noSensorFingerprint')")
            t.column("details", .text).notNull()
            t.column("flaggedAt", .double).notNull()
            t.column("clearedAt", .double)
            t.column("clearedBy", .text)
            // The last evidence row the clearance forgave: later flags look only past it.
            t.column("clearedThrough", .integer)
            t.check(sql: "(clearedAt IS NULL) = (clearedBy IS NULL)")
        }
        // One open flag per player and reason: the history raises it once.
        try db.execute(sql: "CREATE UNIQUE INDEX playerFlag_open ON playerFlag (playerId, reason) WHERE clearedAt IS NULL")
        try db.create(table: "heldReward") { t in
            t.primaryKey("tournamentId", .integer).references("tournament")
            t.column("playerId", .integer).notNull().references("player")
            t.column("heldAt", .double).notNull()
            t.column("releasedAt", .double)
        }
    }
}
