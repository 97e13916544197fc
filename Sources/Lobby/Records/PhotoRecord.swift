import Foundation
import LobbyDatabase

/// A row of `photo`: one profile photo per player, kept apart so player rows stay small.
struct PhotoRecord: SQLRecord {
    static let databaseTableName = "photo"
    var playerId: Int64
    var contentType: String
    var bytes: Data
}

extension PhotoRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "playerId, contentType, bytes"

    init(sqlRow row: SQLRow) throws {
        playerId = try row.get(0)
        contentType = try row.get(1)
        bytes = try row.get(2)
    }

    var sqlValues: [SQLValue] {
        [
            playerId.sqlValue,
            contentType.sqlValue,
            bytes.sqlValue,
        ]
    }
}
