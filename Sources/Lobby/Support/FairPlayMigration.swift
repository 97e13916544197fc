import GRDB

/// Fair play (issue 21). Frozen once shipped.
///
/// - Players' beacon identities were handed out in sequence (1/0, 1/1, …), so anyone could name
///   every player without hearing one. Every player gets a random identity here, as new players
///   do at registration (``LobbyStore/randomBeaconIdentity(_:)``); agents learn theirs when they
///   start, so a device that keeps running across the upgrade advertises the old one until it is
///   restarted.
/// - `player.activeAt`: when the player's agent last spoke to the lobby (a request or an open
///   event stream). An encounter or a resolution must name a player whose agent was on the air.
/// - `player.email` is no longer unique: registering with a taken address told anyone whether an
///   address had an account. SQLite cannot drop a column's UNIQUE, so the table is rebuilt (the
///   documented twelve-step way; GRDB runs migrations with foreign keys off and checks them after).
/// - `location.onAirAt`: when the location's beacon device last told the lobby it is advertising.
///   A sighting of a location proves presence only while its device is on the air.
enum FairPlayMigration {
    static func v8(_ db: Database) throws {
        try db.create(table: "player_v8") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("username", .text).unique().collate(.nocase)
                .check(sql: "username IS NULL OR length(username) BETWEEN 3 AND 32")
            t.column("firstName", .text)
            t.column("lastName", .text)
            t.column("email", .text).collate(.nocase)
            t.column("passwordHash", .text)
            t.column("beaconMajor", .integer).notNull().check(sql: "beaconMajor BETWEEN 0 AND 65535")
            t.column("beaconMinor", .integer).notNull().check(sql: "beaconMinor BETWEEN 0 AND 65535")
            t.column("photoVersion", .integer).notNull().defaults(to: 0)
            t.column("createdAt", .double).notNull()
            t.column("deletedAt", .double)
            t.column("usernameSkeleton", .text)
            t.column("activeAt", .double)
            t.uniqueKey(["beaconMajor", "beaconMinor"])
            t.check(sql: """
                deletedAt IS NOT NULL OR (username IS NOT NULL AND email IS NOT NULL \
                AND passwordHash IS NOT NULL AND firstName IS NOT NULL AND lastName IS NOT NULL)
                """)
        }
        // Every row (deleted players' too: the pair stays unique over the table) gets a random
        // identity, drawn before any is written so that none collides with another.
        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM player ORDER BY id")
        var generator = SystemRandomNumberGenerator()
        var taken = Set<Int>()
        let insert = try db.makeStatement(sql: """
            INSERT INTO player_v8 (id, username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor,
                                   photoVersion, createdAt, deletedAt, usernameSkeleton, activeAt)
            SELECT id, username, firstName, lastName, email, passwordHash, ?, ?,
                   photoVersion, createdAt, deletedAt, usernameSkeleton, NULL FROM player WHERE id = ?
            """)
        for id in ids {
            var identity: Int
            repeat {
                // Major 0 is the locations'.
                identity = Int.random(in: 1...65535, using: &generator) << 16 | Int.random(in: 0...65535, using: &generator)
            } while !taken.insert(identity).inserted
            try insert.execute(arguments: [identity >> 16, identity & 0xFFFF, id])
        }
        try db.drop(table: "player")
        try db.rename(table: "player_v8", to: "player")
        try db.create(index: "player_usernameSkeleton", on: "player", columns: ["usernameSkeleton"])
        try db.alter(table: "location") { t in t.add(column: "onAirAt", .double) }
    }
}
