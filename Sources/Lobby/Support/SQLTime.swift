import Foundation
import GRDB

// Times are stored as seconds since 1970 (UTC) in REAL columns. GRDB's default for `Date` is text
// ("yyyy-MM-dd HH:mm:ss.SSS") written through a DateFormatter and read back with sscanf, which
// cost more than the rest of a write transaction. Numbers compare and index the same way.
//
// Every SQL argument that is a time must be passed as `unixTime`: SQLite orders any number before
// any text, so a `Date` argument (text) compared with these columns would silently match nothing.

extension Date {
    /// Seconds since 1970-01-01T00:00:00Z: how times are stored.
    var unixTime: Double { timeIntervalSince1970 }
}

extension Row {
    /// The time stored at `index`, or nil when the column is NULL.
    func date(atIndex index: Int) -> Date? {
        (self[index] as Double?).map(Date.init(timeIntervalSince1970:))
    }

    /// The time stored at `index`; a NULL there means the schema and the record disagree.
    func requiredDate(atIndex index: Int, _ column: String) throws -> Date {
        guard let seconds = self[index] as Double? else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "column \(column) holds no time")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}

extension GameState: DatabaseValueConvertible {}
extension InvitationResponse: DatabaseValueConvertible {}
