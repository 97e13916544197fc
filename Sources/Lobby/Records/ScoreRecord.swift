import Foundation
import GRDB
import LobbyDatabase

/// A row of `score`: one player's one score in one round, with the client's idempotency key.
struct ScoreRecord: FetchableRecord, PersistableRecord, SQLRecord {
    static let databaseTableName = "score"
    var gameId: Int64
    var n: Int
    var playerId: Int64
    var score: Int
    var key: String
    var submittedAt: Date
}

extension ScoreRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, n, playerId, score, key, submittedAt"

    init(row: Row) throws {
        gameId = row[0]
        n = row[1]
        playerId = row[2]
        score = row[3]
        key = row[4]
        submittedAt = try row.requiredDate(atIndex: 5, "submittedAt")
    }

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

    func encode(to container: inout PersistenceContainer) throws {
        container["gameId"] = gameId
        container["n"] = n
        container["playerId"] = playerId
        container["score"] = score
        container["key"] = key
        container["submittedAt"] = submittedAt.unixTime
    }
}
