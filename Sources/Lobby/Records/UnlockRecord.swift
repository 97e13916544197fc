import Foundation
import LobbyDatabase

/// A row of `unlock`: `ownerId` has unlocked `unlockedId`. Persistent unlocks survive a lost
/// two-player game; the others can be taken away.
struct UnlockRecord: SQLRecord {
    static let databaseTableName = "unlock"
    var ownerId: Int64
    var unlockedId: Int64
    var persistent: Bool
    var since: Date
}

extension UnlockRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "ownerId, unlockedId, persistent, since"

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
}
