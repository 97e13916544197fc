import GRDB

/// Calibration from the crowd: the two-way exchanges players' reports make (both directions of
/// one pair's path, read at about one moment), and what the periodic solve made of them: each
/// player's radio offsets and each location's exponent. Frozen once shipped; ``PostgresSchema``
/// holds the same tables for PostgreSQL.
enum CrowdCalibrationMigration {
    static func v11(_ db: Database) throws {
        // `first…` is what the player with the smaller id read of the other, `second…` the other
        // way round; the site is the location both were present at, none in the open air.
        try db.create(table: "crowdExchange") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("firstId", .integer).notNull().references("player")
            t.column("secondId", .integer).notNull().references("player")
            t.column("locationId", .integer).references("location")
            t.column("at", .double).notNull()
            t.column("firstRssi", .double).notNull().check(sql: "firstRssi BETWEEN -130 AND 20")
            t.column("firstMeasuredPower", .double).notNull().check(sql: "firstMeasuredPower BETWEEN -128 AND 127")
            t.column("firstVariance", .double).check(sql: "firstVariance IS NULL OR firstVariance >= 0")
            t.column("secondRssi", .double).notNull().check(sql: "secondRssi BETWEEN -130 AND 20")
            t.column("secondMeasuredPower", .double).notNull().check(sql: "secondMeasuredPower BETWEEN -128 AND 127")
            t.column("secondVariance", .double).check(sql: "secondVariance IS NULL OR secondVariance >= 0")
            t.check(sql: "firstId < secondId")
        }
        try db.create(index: "crowdExchange_pair", on: "crowdExchange", columns: ["firstId", "secondId", "at"])
        try db.create(index: "crowdExchange_second", on: "crowdExchange", columns: ["secondId"])
        try db.create(index: "crowdExchange_age", on: "crowdExchange", columns: ["at"])
        // Bounds as the API states them (RadioOffsets, CrowdProfile).
        try db.create(table: "radioOffsets") { t in
            t.primaryKey("playerId", .integer).references("player")
            t.column("transmit", .double).notNull().check(sql: "transmit BETWEEN -30 AND 30")
            t.column("receive", .double).notNull().check(sql: "receive BETWEEN -30 AND 30")
            t.column("transmitError", .double).notNull().check(sql: "transmitError >= 0")
            t.column("receiveError", .double).notNull().check(sql: "receiveError >= 0")
            t.column("pairs", .integer).notNull().check(sql: "pairs >= 0")
            t.column("solvedAt", .double).notNull()
        }
        try db.create(table: "crowdProfile") { t in
            t.primaryKey("locationId", .integer).references("location")
            t.column("exponent", .double).notNull().check(sql: "exponent BETWEEN 1 AND 6")
            t.column("exponentError", .double).notNull().check(sql: "exponentError >= 0")
            t.column("pairs", .integer).notNull().check(sql: "pairs >= 0")
            t.column("solvedAt", .double).notNull()
        }
    }
}
