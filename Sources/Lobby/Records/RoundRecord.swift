import GRDB

/// A row of `round`: round `n` (from 1) of a game and the minigame everyone plays in it.
struct RoundRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "round"
    var gameId: Int64
    var n: Int
    var minigame: String
}

extension RoundRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, n, minigame"

    init(row: Row) throws {
        gameId = row[0]
        n = row[1]
        minigame = row[2]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["gameId"] = gameId
        container["n"] = n
        container["minigame"] = minigame
    }
}
