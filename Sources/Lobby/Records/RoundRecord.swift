import LobbyDatabase
import Minigames

/// A row of `round`: round `n` (from 1) of a game, the minigame everyone plays in it (a
/// ``Minigames/MinigameCatalog`` name) and the plan the lobby drew for it: how long it lasts and,
/// for Quickdraw, when the signal comes. Agents play exactly this plan; scores are verified on it.
struct RoundRecord: SQLRecord {
    static let databaseTableName = "round"
    var gameId: Int64
    var n: Int
    var minigame: MinigameName
    /// Seconds the round lasts.
    var duration: Double
    /// Seconds from the start of the round to the signal, when plans showed it (before v8); nil now.
    var signalTime: Double?
    /// Quickdraw's signal, seconds from the start of the round: hidden from plans, revealed when
    /// the round starts (``LobbyStore/revealSignal(_:game:round:)``).
    var signalDelay: Double?
}

extension RoundRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "gameId, n, minigame, duration, signalTime, signalDelay"

    init(sqlRow row: SQLRow) throws {
        gameId = try row.get(0)
        n = try row.get(1)
        minigame = try row.get(2)
        duration = try row.get(3)
        signalTime = try row.get(4)
        signalDelay = try row.get(5)
    }

    var sqlValues: [SQLValue] {
        [
            gameId.sqlValue,
            n.sqlValue,
            minigame.sqlValue,
            duration.sqlValue,
            signalTime.sqlValue,
            signalDelay.sqlValue,
        ]
    }
}
