import Foundation
import GRDB
import LobbyDatabase

/// A row of `session`: a bearer token, stored as its SHA-256 digest only.
struct SessionRecord: FetchableRecord, MutablePersistableRecord, SQLRecordWithID {
    static let databaseTableName = "session"
    var id: Int64?
    var playerId: Int64
    var tokenHash: Data
    var createdAt: Date
    var expiresAt: Date

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

extension SessionRecord {
    /// The columns in the order ``init(row:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "id, playerId, tokenHash, createdAt, expiresAt"

    init(row: Row) throws {
        id = row[0]
        playerId = row[1]
        tokenHash = row[2]
        createdAt = try row.requiredDate(atIndex: 3, "createdAt")
        expiresAt = try row.requiredDate(atIndex: 4, "expiresAt")
    }

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

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["playerId"] = playerId
        container["tokenHash"] = tokenHash
        container["createdAt"] = createdAt.unixTime
        container["expiresAt"] = expiresAt.unixTime
    }
}
