import LobbyDatabase

/// The lookups the rules make over and over.
enum Query {
    static func player(_ db: any SQLSession, id: Int64) throws -> PlayerRecord? {
        try PlayerRecord.fetchOne(db, "SELECT * FROM player WHERE id = ?", id)
    }

    static func player(_ db: any SQLSession, username: String) throws -> PlayerRecord? {
        try PlayerRecord.fetchOne(db, "SELECT * FROM player WHERE \(db.caseless("username"))", username)
    }

    static func game(_ db: any SQLSession, id: Int64) throws -> GameRecord? {
        try GameRecord.fetchOne(db, "SELECT * FROM game WHERE id = ?", id)
    }

    static func membership(_ db: any SQLSession, game: Int64, player: Int64) throws -> MembershipRecord? {
        try MembershipRecord.fetchOne(db, "SELECT * FROM membership WHERE gameId = ? AND playerId = ?", game, player)
    }

    static func memberships(_ db: any SQLSession, game: Int64) throws -> [MembershipRecord] {
        try MembershipRecord.fetchAll(db, "SELECT * FROM membership WHERE gameId = ? ORDER BY playerId", game)
    }

    static func rounds(_ db: any SQLSession, game: Int64) throws -> [RoundRecord] {
        try RoundRecord.fetchAll(db, "SELECT * FROM round WHERE gameId = ? ORDER BY n", game)
    }

    static func round(_ db: any SQLSession, game: Int64, n: Int) throws -> RoundRecord? {
        try RoundRecord.fetchOne(db, "SELECT * FROM round WHERE gameId = ? AND n = ?", game, n)
    }

    static func scores(_ db: any SQLSession, game: Int64) throws -> [ScoreRecord] {
        try ScoreRecord.fetchAll(db, "SELECT * FROM score WHERE gameId = ?", game)
    }

    static func score(_ db: any SQLSession, game: Int64, round: Int, player: Int64) throws -> ScoreRecord? {
        try ScoreRecord.fetchOne(db, "SELECT * FROM score WHERE gameId = ? AND n = ? AND playerId = ?", game, round, player)
    }

    static func unlocks(_ db: any SQLSession, owner: Int64) throws -> [UnlockRecord] {
        try UnlockRecord.fetchAll(db, "SELECT * FROM unlock WHERE ownerId = ?", owner)
    }
}

extension SQLSession {
    /// `column = ?` for a text column compared without case: SQLite's column has the NOCASE
    /// collation, PostgreSQL's has a unique index on `lower(column)`, which this comparison uses.
    func caseless(_ column: String) -> String {
        dialect == .postgres ? "lower(\(column)) = lower(?)" : "\(column) = ?"
    }
}
