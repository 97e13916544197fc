import GRDB

/// A location's site profile: the path-loss exponent its operator measured there with
/// `nearplay calibrate ranging`, which the location's beacon publishes. Frozen once shipped.
enum SiteProfileMigration {
    static func v5(_ db: Database) throws {
        try db.alter(table: "location") { t in
            t.add(column: "siteExponent", .double).check(sql: "siteExponent IS NULL OR siteExponent BETWEEN 1 AND 6")
            t.add(column: "siteDistances", .text)
            t.add(column: "siteReadings", .integer).check(sql: "siteReadings IS NULL OR siteReadings >= 1")
            t.add(column: "siteCalibratedAt", .double)
        }
    }
}
