import Foundation
import LobbyDatabase

/// A row of `session`: a bearer token, stored as its SHA-256 digest only.
struct SessionRecord: SQLRecordWithID {
    static let databaseTableName = "session"
    var id: Int64?
    var playerId: Int64
    var tokenHash: Data
    var createdAt: Date
    var expiresAt: Date
}

extension SessionRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "id, playerId, tokenHash, createdAt, expiresAt"

    init(sqlRow row: SQLRow) throws {
        id = try row.get(0)
        playerId = try row.get(1)
        tokenHash = try row.get(2)
        createdAt = try row.get(3)
        expiresAt = try row.get(4)
    }

    var sqlValues: [SQLValue] {
        [
            id.sqlValue,
            playerId.sqlValue,
            tokenHash.sqlValue,
            createdAt.unixTime.sqlValue,
            expiresAt.unixTime.sqlValue,
        ]
    }
}
