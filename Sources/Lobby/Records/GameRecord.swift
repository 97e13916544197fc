import Foundation
import LobbyDatabase

/// A row of `game`. A game starts `pending` as an invitation (the two share their id), becomes
/// `open` once every invitee answered or the invitation expired with somebody accepting, and ends
/// `finished` (evaluated) or `cancelled` (nobody accepted).
struct GameRecord: SQLRecordWithID {
    static let databaseTableName = "game"
    var id: Int64?
    var inviterId: Int64
    var state: GameState
    var createdAt: Date
    var expiresAt: Date
    var openedAt: Date?
    var finishedAt: Date?
    var winnerId: Int64?
}

extension GameRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "id, inviterId, state, createdAt, expiresAt, openedAt, finishedAt, winnerId"

    init(sqlRow row: SQLRow) throws {
        id = try row.get(0)
        inviterId = try row.get(1)
        state = try row.get(2)
        createdAt = try row.get(3)
        expiresAt = try row.get(4)
        openedAt = try row.get(5)
        finishedAt = try row.get(6)
        winnerId = try row.get(7)
    }

    var sqlValues: [SQLValue] {
        [
            id.sqlValue,
            inviterId.sqlValue,
            state.sqlValue,
            createdAt.unixTime.sqlValue,
            expiresAt.unixTime.sqlValue,
            openedAt.sqlValue,
            finishedAt.sqlValue,
            winnerId.sqlValue,
        ]
    }
}
