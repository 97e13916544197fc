import Foundation
import LobbyDatabase

// Times are stored as seconds since 1970 (UTC) in REAL columns. GRDB's default for `Date` is text
// ("yyyy-MM-dd HH:mm:ss.SSS") written through a DateFormatter and read back with sscanf, which
// cost more than the rest of a write transaction. Numbers compare and index the same way.
//
// Arguments that are times go as these seconds too: `unixTime`, or a `Date`, which LobbyDatabase
// binds as seconds since 1970 on both engines. (Through GRDB directly a `Date` would be text, and
// SQLite orders any number before any text: a comparison would silently match nothing.)

extension Date {
    /// Seconds since 1970-01-01T00:00:00Z: how times are stored.
    var unixTime: Double { timeIntervalSince1970 }
}

extension SQLRow {
    /// The time stored at `index` (seconds since 1970), or nil when it is NULL.
    func date(atIndex index: Int) throws -> Date? {
        try get(index, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }

    /// The time stored at `index`; a NULL there means the schema and the record disagree, and the
    /// error names `column`.
    func requiredDate(atIndex index: Int, _ column: String) throws -> Date {
        guard let seconds = try get(index, as: Double?.self) else {
            throw SQLError.wrongType(column: column, value: .null, wanted: "time")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}
