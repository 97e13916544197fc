import Foundation
import GRDB
import LobbyDatabase

/// A row of `unlock`: `ownerId` has unlocked `unlockedId`. Persistent unlocks survive a lost
/// two-player game; the others can be taken away.
struct UnlockRecord: FetchableRecord, PersistableRecord, SQLRecord {
    static let databaseTableName = "unlock"
    var ownerId: Int64
    var unlockedId: Int64
    var persistent: Bool
    var since: Date
}

extension UnlockRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "ownerId, unlockedId, persistent, since"

    init(row: Row) throws {
        ownerId = row[0]
        unlockedId = row[1]
        persistent = row[2]
        since = try row.requiredDate(atIndex: 3, "since")
    }

    init(sqlRow row: SQLRow) throws {
        ownerId = try row.get(0)
        unlockedId = try row.get(1)
        persistent = try row.get(2)
        since = try row.get(3)
    }

    var sqlValues: [SQLValue] {
        [
            ownerId.sqlValue,
            unlockedId.sqlValue,
            persistent.sqlValue,
            since.unixTime.sqlValue,
        ]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["ownerId"] = ownerId
        container["unlockedId"] = unlockedId
        container["persistent"] = persistent
        container["since"] = since.unixTime
    }
}
