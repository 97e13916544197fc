import GRDB
import LobbyDatabase

// The rows written on every invitation, answer and score, through fixed statements that each
// engine prepares once per connection (SQLite's session caches them by their text). Building the
// SQL from a record's column list on each call (``SQLRecord/insert(_:ignoringConflicts:)``) costs
// more than SQLite's own work here. Other writes keep the generic methods.

extension GameRecord {
    mutating func insertRow(_ db: any SQLSession) throws {
        guard let id = try db.fetchValue(Int64.self, """
            INSERT INTO game (inviterId, state, createdAt, expiresAt, openedAt, finishedAt, winnerId)
            VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, inviterId, state, createdAt.unixTime, expiresAt.unixTime, openedAt?.unixTime, finishedAt?.unixTime, winnerId)
        else { throw SQLError.connection("the database inserted a game without answering its id") }
        self.id = id
    }

    func updateRow(_ db: any SQLSession) throws {
        try db.execute("""
            UPDATE game SET inviterId = ?, state = ?, createdAt = ?, expiresAt = ?, openedAt = ?, finishedAt = ?, winnerId = ?
            WHERE id = ?
            """, inviterId, state, createdAt.unixTime, expiresAt.unixTime, openedAt?.unixTime, finishedAt?.unixTime, winnerId, id)
    }
}

extension MembershipRecord {
    func insertRow(_ db: any SQLSession) throws {
        try db.execute("INSERT INTO membership (gameId, playerId, role, response, respondedAt) VALUES (?, ?, ?, ?, ?)",
                       gameId, playerId, role, response, respondedAt?.unixTime)
    }

    func updateRow(_ db: any SQLSession) throws {
        try db.execute("UPDATE membership SET role = ?, response = ?, respondedAt = ? WHERE gameId = ? AND playerId = ?",
                       role, response, respondedAt?.unixTime, gameId, playerId)
    }
}

extension RoundRecord {
    func insertRow(_ db: any SQLSession) throws {
        try db.execute("INSERT INTO round (gameId, n, minigame, duration, signalTime, signalDelay) VALUES (?, ?, ?, ?, ?, ?)",
                       gameId, n, minigame, duration, signalTime, signalDelay)
    }
}

extension ScoreRecord {
    func insertRow(_ db: any SQLSession) throws {
        try db.execute("INSERT INTO score (gameId, n, playerId, score, key, submittedAt) VALUES (?, ?, ?, ?, ?, ?)",
                       gameId, n, playerId, score, key, submittedAt.unixTime)
    }
}
