import GRDB

/// A row of `round`: round `n` (from 1) of a game and the minigame everyone plays in it.
struct RoundRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "round"
    var gameId: Int64
    var n: Int
    var minigame: String
}
