import GRDB

/// Two-way ranging: an encounter keeps the reading that came with it (the filtered RSSI the
/// observer read of the player seen, and the measured power that player advertised), so the
/// pair's other agent can be given it. Frozen once shipped.
enum TwoWayMigration {
    static func v4(_ db: Database) throws {
        try db.alter(table: "encounter") { t in
            t.add(column: "rssi", .double).check(sql: "rssi IS NULL OR rssi BETWEEN -130 AND 20")
            t.add(column: "measuredPower", .double).check(sql: "measuredPower IS NULL OR measuredPower BETWEEN -128 AND 127")
            t.add(column: "rssiVariance", .double).check(sql: "rssiVariance IS NULL OR rssiVariance >= 0")
        }
    }
}
