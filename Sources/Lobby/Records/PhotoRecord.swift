import Foundation
import GRDB
import LobbyDatabase

/// A row of `photo`: one profile photo per player, kept apart so player rows stay small.
struct PhotoRecord: FetchableRecord, PersistableRecord, SQLRecord {
    static let databaseTableName = "photo"
    var playerId: Int64
    var contentType: String
    var bytes: Data
}

extension PhotoRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "playerId, contentType, bytes"

    init(row: Row) throws {
        playerId = row[0]
        contentType = row[1]
        bytes = row[2]
    }

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

    func encode(to container: inout PersistenceContainer) throws {
        container["playerId"] = playerId
        container["contentType"] = contentType
        container["bytes"] = bytes
    }
}
