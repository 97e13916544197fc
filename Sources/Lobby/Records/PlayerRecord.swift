import Foundation
import LobbyDatabase

/// A row of `player`. After deletion the personal columns are NULL and `deletedAt` is set; the row
/// stays so games and rounds keep a reference.
struct PlayerRecord: SQLRecordWithID {
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
    /// The look-alike form of the username (``UsernameSkeleton``); kept after deletion, for the
    /// username's reservation.
    var usernameSkeleton: String? = nil
    /// When the player's agent last spoke to the lobby, as far as the store has written it down
    /// (``ActivityLedger``).
    var activeAt: Date? = nil
    /// The 32 bytes its rotating identity is derived from (``RotatingIdentity``); nil until the
    /// player's agent first asks (players registered before identities rotated).
    var beaconSecret: Data? = nil
}

extension PlayerRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "id, username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, photoVersion, createdAt, deletedAt, usernameSkeleton, activeAt, beaconSecret"

    init(sqlRow row: SQLRow) throws {
        id = try row.get(0)
        username = try row.get(1)
        firstName = try row.get(2)
        lastName = try row.get(3)
        email = try row.get(4)
        passwordHash = try row.get(5)
        beaconMajor = try row.get(6)
        beaconMinor = try row.get(7)
        photoVersion = try row.get(8)
        createdAt = try row.get(9)
        deletedAt = try row.get(10)
        usernameSkeleton = try row.get(11)
        activeAt = try row.get(12)
        beaconSecret = try row.get(13)
    }

    var sqlValues: [SQLValue] {
        [
            id.sqlValue,
            username.sqlValue,
            firstName.sqlValue,
            lastName.sqlValue,
            email.sqlValue,
            passwordHash.sqlValue,
            beaconMajor.sqlValue,
            beaconMinor.sqlValue,
            photoVersion.sqlValue,
            createdAt.unixTime.sqlValue,
            deletedAt.sqlValue,
            usernameSkeleton.sqlValue,
            activeAt.sqlValue,
            beaconSecret.sqlValue,
        ]
    }
}
