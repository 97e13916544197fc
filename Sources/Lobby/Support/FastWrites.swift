import GRDB

// The rows written on every invitation, answer and score, through statements compiled once per
// connection. GRDB's generic `insert`/`update` rebuild their SQL and a persistence container on
// each call, which cost more than SQLite's own work here. Other writes keep the generic methods.

extension GameRecord {
    mutating func insertRow(_ db: Database) throws {
        try db.cached("""
            INSERT INTO game (inviterId, state, createdAt, expiresAt, openedAt, finishedAt, winnerId)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [inviterId, state, createdAt.unixTime, expiresAt.unixTime, openedAt?.unixTime, finishedAt?.unixTime, winnerId])
        id = db.lastInsertedRowID
    }

    func updateRow(_ db: Database) throws {
        try db.cached("""
            UPDATE game SET inviterId = ?, state = ?, createdAt = ?, expiresAt = ?, openedAt = ?, finishedAt = ?, winnerId = ?
            WHERE id = ?
            """).execute(arguments: [inviterId, state, createdAt.unixTime, expiresAt.unixTime, openedAt?.unixTime, finishedAt?.unixTime, winnerId, id])
    }
}

extension MembershipRecord {
    func insertRow(_ db: Database) throws {
        try db.cached("INSERT INTO membership (gameId, playerId, role, response, respondedAt) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [gameId, playerId, role, response, respondedAt?.unixTime])
    }

    func updateRow(_ db: Database) throws {
        try db.cached("UPDATE membership SET role = ?, response = ?, respondedAt = ? WHERE gameId = ? AND playerId = ?")
            .execute(arguments: [role, response, respondedAt?.unixTime, gameId, playerId])
    }
}

extension RoundRecord {
    func insertRow(_ db: Database) throws {
        try db.cached("INSERT INTO round (gameId, n, minigame, duration, signalTime, signalDelay) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [gameId, n, minigame, duration, signalTime, signalDelay])
    }
}

extension ScoreRecord {
    func insertRow(_ db: Database) throws {
        try db.cached("INSERT INTO score (gameId, n, playerId, score, key, submittedAt) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [gameId, n, playerId, score, key, submittedAt.unixTime])
    }
}

extension EventRecord {
    mutating func insertRow(_ db: Database) throws {
        try db.cached("INSERT INTO event (playerId, at, kind, payload) VALUES (?, ?, ?, ?)")
            .execute(arguments: [playerId, at.unixTime, kind, payload])
        id = db.lastInsertedRowID
    }
}
