import Foundation
import LobbyDatabase

/// A row of `event`: something to tell one player. Its id is the feed cursor.
struct EventRecord: SQLRecordWithID {
    static let databaseTableName = "event"
    var id: Int64?
    var playerId: Int64
    var at: Date
    var kind: String
    var payload: String
}

extension EventRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "id, playerId, at, kind, payload"

    init(sqlRow row: SQLRow) throws {
        id = try row.get(0)
        playerId = try row.get(1)
        at = try row.get(2)
        kind = try row.get(3)
        payload = try row.get(4)
    }

    var sqlValues: [SQLValue] {
        [
            id.sqlValue,
            playerId.sqlValue,
            at.unixTime.sqlValue,
            kind.sqlValue,
            payload.sqlValue,
        ]
    }
}
