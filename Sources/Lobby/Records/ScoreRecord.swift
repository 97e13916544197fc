import Foundation
import GRDB

/// A row of `score`: one player's one score in one round, with the client's idempotency key.
struct ScoreRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "score"
    var gameId: Int64
    var n: Int
    var playerId: Int64
    var score: Int
    var key: String
    var submittedAt: Date
}
