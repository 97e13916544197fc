import Foundation
import GRDB

/// A row of `photo`: one profile photo per player, kept apart so player rows stay small.
struct PhotoRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "photo"
    var playerId: Int64
    var contentType: String
    var bytes: Data
}
