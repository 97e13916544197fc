import Foundation
import GRDB
import LobbyDatabase

// Issue 23 moves the store from GRDB onto LobbyDatabase, file by file. Until every file has moved,
// code already moved takes `any SQLSession` and code not moved yet takes GRDB's `Database`, and
// these two cross between them. Both directions exist only on SQLite: PostgreSQL cannot be chosen
// (`lobby serve` has no `--database` for it) until no GRDB use is left, and then this file goes.

extension Database {
    /// This connection as an engine-neutral session, for calling code that has moved.
    var sql: any SQLSession { SQLiteSession(db: self) }
}

extension SQLRow {
    /// The time stored at `index` (seconds since 1970), or nil when it is NULL.
    func date(atIndex index: Int) throws -> Date? {
        try get(index, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }

    /// The time stored at `index`; a NULL there means the schema and the record disagree.
    func requiredDate(atIndex index: Int, _ column: String) throws -> Date {
        guard let seconds = try get(index, as: Double?.self) else {
            throw SQLError.wrongType(column: column, value: .null, wanted: "time")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}

extension GameState: SQLValueConvertible {}
extension InvitationResponse: SQLValueConvertible {}

extension LobbyStore {
    /// The GRDB pool of a SQLite store, for tests and tools that have not moved yet.
    var grdbPool: DatabasePool {
        guard let sqlite else { preconditionFailure("GRDB was asked for on PostgreSQL: this caller still needs moving onto LobbyDatabase") }
        return sqlite.pool
    }
}
