import Foundation
import GRDB

/// A row of `player`. After deletion the personal columns are NULL and `deletedAt` is set; the row
/// stays so games and rounds keep a reference.
struct PlayerRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "player"
    var id: Int64?
    var username: String?
    var firstName: String?
    var lastName: String?
    var email: String?
    var passwordHash: String?
    var beaconMajor: Int
    var beaconMinor: Int
    var photoVersion: Int
    var createdAt: Date
    var deletedAt: Date?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
