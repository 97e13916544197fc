import Foundation
import GRDB

/// A row of `event`: something to tell one player. Its id is the feed cursor.
struct EventRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "event"
    var id: Int64?
    var playerId: Int64
    var at: Date
    var kind: String
    var payload: String

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
