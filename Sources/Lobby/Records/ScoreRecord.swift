import Foundation
import LobbyDatabase

/// A row of `score`: one player's one score in one round, with the client's idempotency key.
struct ScoreRecord: SQLRecord {
    static let databaseTableName = "score"
    var gameId: Int64
    var n: Int
    var playerId: Int64
    var score: Int
    var key: String
    var submittedAt: Date
}

extension ScoreRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, n, playerId, score, key, submittedAt"

    init(sqlRow row: SQLRow) throws {
        gameId = try row.get(0)
        n = try row.get(1)
        playerId = try row.get(2)
        score = try row.get(3)
        key = try row.get(4)
        submittedAt = try row.get(5)
    }

    var sqlValues: [SQLValue] {
        [
            gameId.sqlValue,
            n.sqlValue,
            playerId.sqlValue,
            score.sqlValue,
            key.sqlValue,
            submittedAt.unixTime.sqlValue,
        ]
    }
}
