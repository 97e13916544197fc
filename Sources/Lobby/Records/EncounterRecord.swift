import Foundation
import GRDB

/// A row of `encounter`: the latest time `observerId` reported seeing `seenId`.
struct EncounterRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "encounter"
    var observerId: Int64
    var seenId: Int64
    var lastSeenAt: Date
    var distance: Double?
}
