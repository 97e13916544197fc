import Foundation
import GRDB

/// A row of `unlock`: `ownerId` has unlocked `unlockedId`. Persistent unlocks survive a lost
/// two-player game; the others can be taken away.
struct UnlockRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "unlock"
    var ownerId: Int64
    var unlockedId: Int64
    var persistent: Bool
    var since: Date
}
