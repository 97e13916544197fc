import GRDB

extension Database {
    /// A statement compiled once per connection and reused. The hot paths run a handful of small
    /// queries per request; compiling each one anew would cost more than running it.
    func cached(_ sql: String) throws -> Statement {
        try cachedStatement(sql: sql)
    }
}

/// The lookups the rules make over and over, as cached statements.
enum Query {
    static func player(_ db: Database, id: Int64) throws -> PlayerRecord? {
        try PlayerRecord.fetchOne(db.cached("SELECT * FROM player WHERE id = ?"), arguments: [id])
    }

    /// Undeleted players only (deleted ones have no username).
    static func player(_ db: Database, username: String) throws -> PlayerRecord? {
        try PlayerRecord.fetchOne(db.cached("SELECT * FROM player WHERE username = ?"), arguments: [username])
    }

    static func game(_ db: Database, id: Int64) throws -> GameRecord? {
        try GameRecord.fetchOne(db.cached("SELECT * FROM game WHERE id = ?"), arguments: [id])
    }

    static func membership(_ db: Database, game: Int64, player: Int64) throws -> MembershipRecord? {
        try MembershipRecord.fetchOne(db.cached("SELECT * FROM membership WHERE gameId = ? AND playerId = ?"), arguments: [game, player])
    }

    static func memberships(_ db: Database, game: Int64) throws -> [MembershipRecord] {
        try MembershipRecord.fetchAll(db.cached("SELECT * FROM membership WHERE gameId = ? ORDER BY playerId"), arguments: [game])
    }

    static func rounds(_ db: Database, game: Int64) throws -> [RoundRecord] {
        try RoundRecord.fetchAll(db.cached("SELECT * FROM round WHERE gameId = ? ORDER BY n"), arguments: [game])
    }

    static func round(_ db: Database, game: Int64, n: Int) throws -> RoundRecord? {
        try RoundRecord.fetchOne(db.cached("SELECT * FROM round WHERE gameId = ? AND n = ?"), arguments: [game, n])
    }

    static func scores(_ db: Database, game: Int64) throws -> [ScoreRecord] {
        try ScoreRecord.fetchAll(db.cached("SELECT * FROM score WHERE gameId = ?"), arguments: [game])
    }

    static func score(_ db: Database, game: Int64, round: Int, player: Int64) throws -> ScoreRecord? {
        try ScoreRecord.fetchOne(db.cached("SELECT * FROM score WHERE gameId = ? AND n = ? AND playerId = ?"), arguments: [game, round, player])
    }

    static func unlocks(_ db: Database, owner: Int64) throws -> [UnlockRecord] {
        try UnlockRecord.fetchAll(db.cached("SELECT * FROM unlock WHERE ownerId = ?"), arguments: [owner])
    }
}
