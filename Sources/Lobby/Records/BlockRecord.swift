import Foundation
import GRDB
import LobbyDatabase

/// A row of `block`: `blockerId` wants nothing to do with `blockedId`.
struct BlockRecord: FetchableRecord, PersistableRecord, SQLRecord {
    static let databaseTableName = "block"
    var blockerId: Int64
    var blockedId: Int64
    var createdAt: Date
}

extension BlockRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "blockerId, blockedId, createdAt"

    init(row: Row) throws {
        blockerId = row[0]
        blockedId = row[1]
        createdAt = try row.requiredDate(atIndex: 2, "createdAt")
    }

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

    func encode(to container: inout PersistenceContainer) throws {
        container["blockerId"] = blockerId
        container["blockedId"] = blockedId
        container["createdAt"] = createdAt.unixTime
    }
}
