import Foundation
import GRDB

/// A row of `session`: a bearer token, stored as its SHA-256 digest only.
struct SessionRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "session"
    var id: Int64?
    var playerId: Int64
    var tokenHash: Data
    var createdAt: Date
    var expiresAt: Date

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
