import GRDB
import LobbyDatabase

// GRDB under a SQLite store, for what only SQLite has: tests of migrations from old lobby files
// read those files through GRDB. The store itself speaks only `SQLSession`.

extension Database {
    /// This connection as an engine-neutral session.
    var sql: any SQLSession { SQLiteSession(db: self) }
}

extension LobbyStore {
    /// The GRDB pool of a SQLite store; there is none on PostgreSQL.
    var grdbPool: DatabasePool {
        guard let sqlite else { preconditionFailure("GRDB was asked for on PostgreSQL: use the store's SQLDatabase") }
        return sqlite.pool
    }
}
