import Foundation
import LobbyDatabase

/// A row of `block`: `blockerId` wants nothing to do with `blockedId`.
struct BlockRecord: SQLRecord {
    static let databaseTableName = "block"
    var blockerId: Int64
    var blockedId: Int64
    var createdAt: Date
}

extension BlockRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "blockerId, blockedId, createdAt"

    init(sqlRow row: SQLRow) throws {
        blockerId = try row.get(0)
        blockedId = try row.get(1)
        createdAt = try row.get(2)
    }

    var sqlValues: [SQLValue] {
        [
            blockerId.sqlValue,
            blockedId.sqlValue,
            createdAt.unixTime.sqlValue,
        ]
    }
}
