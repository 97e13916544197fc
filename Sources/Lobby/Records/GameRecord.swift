import Foundation
import GRDB

/// A row of `game`. A game starts `pending` as an invitation (the two share their id), becomes
/// `open` once every invitee answered or the invitation expired with somebody accepting, and ends
/// `finished` (evaluated) or `cancelled` (nobody accepted).
struct GameRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "game"
    var id: Int64?
    var inviterId: Int64
    var state: GameState
    var createdAt: Date
    var expiresAt: Date
    var openedAt: Date?
    var finishedAt: Date?
    var winnerId: Int64?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
