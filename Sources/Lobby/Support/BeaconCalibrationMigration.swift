import GRDB

/// Calibration from location beacons: where each beacon stands on its owner's site, what beacons
/// placed on one site last heard of each other, and the exchanges those hearings made (both
/// directions of one path at about one moment, at the distance the positions give). Frozen once
/// shipped; ``PostgresSchema`` holds the same for PostgreSQL.
enum BeaconCalibrationMigration {
    static func v12(_ db: Database) throws {
        // A site is a label of the owner's: beacons of one owner with one label share a plane
        // (metres) and a path-loss exponent.
        try db.alter(table: "location") { t in
            t.add(column: "positionSite", .text).check(sql: "positionSite IS NULL OR length(positionSite) BETWEEN 1 AND 64")
            t.add(column: "positionX", .double).check(sql: "positionX IS NULL OR positionX BETWEEN -1000 AND 1000")
            t.add(column: "positionY", .double).check(sql: "positionY IS NULL OR positionY BETWEEN -1000 AND 1000")
            t.add(column: "placedAt", .double)
        }
        // The latest reading one placed beacon reported of another.
        try db.create(table: "locationHearing") { t in
            t.column("listenerId", .integer).notNull().references("location")
            t.column("heardId", .integer).notNull().references("location")
            t.column("at", .double).notNull()
            t.column("rssi", .double).notNull().check(sql: "rssi BETWEEN -130 AND 20")
            t.column("measuredPower", .double).notNull().check(sql: "measuredPower BETWEEN -128 AND 127")
            t.column("variance", .double).check(sql: "variance IS NULL OR variance >= 0")
            t.primaryKey(["listenerId", "heardId"])
            t.check(sql: "listenerId <> heardId")
        }
        try db.create(index: "locationHearing_heard", on: "locationHearing", columns: ["heardId"])
        // `first…` is what the location with the smaller id read of the other.
        try db.create(table: "locationExchange") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("firstId", .integer).notNull().references("location")
            t.column("secondId", .integer).notNull().references("location")
            t.column("at", .double).notNull()
            t.column("firstRssi", .double).notNull().check(sql: "firstRssi BETWEEN -130 AND 20")
            t.column("firstMeasuredPower", .double).notNull().check(sql: "firstMeasuredPower BETWEEN -128 AND 127")
            t.column("firstVariance", .double).check(sql: "firstVariance IS NULL OR firstVariance >= 0")
            t.column("secondRssi", .double).notNull().check(sql: "secondRssi BETWEEN -130 AND 20")
            t.column("secondMeasuredPower", .double).notNull().check(sql: "secondMeasuredPower BETWEEN -128 AND 127")
            t.column("secondVariance", .double).check(sql: "secondVariance IS NULL OR secondVariance >= 0")
            t.check(sql: "firstId < secondId")
        }
        try db.create(index: "locationExchange_pair", on: "locationExchange", columns: ["firstId", "secondId", "at"])
        try db.create(index: "locationExchange_second", on: "locationExchange", columns: ["secondId"])
        try db.create(index: "locationExchange_age", on: "locationExchange", columns: ["at"])
        // What the last solve made of a crowd profile: from players or from beacons, and the
        // shadowing per path it took (beacons only).
        try db.alter(table: "crowdProfile") { t in
            t.add(column: "source", .text).notNull().defaults(to: "players").check(sql: "source IN ('players', 'beacons')")
            t.add(column: "shadowing", .double).check(sql: "shadowing IS NULL OR shadowing >= 0")
        }
    }
}
