import Foundation
import GRDB

/// A row of `block`: `blockerId` wants nothing to do with `blockedId`.
struct BlockRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "block"
    var blockerId: Int64
    var blockedId: Int64
    var createdAt: Date
}
