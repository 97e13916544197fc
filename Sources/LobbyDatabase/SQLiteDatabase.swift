import Foundation
import GRDB

/// The lobby's default engine: one SQLite file in WAL mode, through GRDB. GRDB serialises writes
/// (one writer at a time, readers beside it on their snapshots), so a write transaction never
/// conflicts with another and runs exactly once.
public final class SQLiteDatabase: SQLDatabase {
    public let dialect = SQLDialect.sqlite
    /// The pool itself, for what only SQLite has (WAL checkpoints).
    public let pool: DatabasePool

    /// Opens (creating if needed) the file at `path` with foreign keys on, waiting up to 10 s for a
    /// lock another process holds.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL: a commit is in the WAL file when write() returns, so it
            // survives the process being killed; only a power loss can roll back the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await pool.write { db in try Self.translatingErrors { try body(SQLiteSession(db: db)) } }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await pool.read { db in try Self.translatingErrors { try body(SQLiteSession(db: db)) } }
    }

    /// Records applied migrations in `grdb_migrations`, the table GRDB's own migrator keeps, so a
    /// lobby file written before this engine existed carries its history over unchanged.
    public func migrate(_ migrations: [SQLMigration]) async throws {
        try await pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
            for migration in migrations where !applied.contains(migration.name) {
                try db.inTransaction(.immediate) {
                    let session = SQLiteSession(db: db)
                    try Self.translatingErrors { try session.executeScript(migration.sqlite) }
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.name])
                    return .commit
                }
            }
        }
    }

    public func close() async throws { try pool.close() }

    /// Runs `body`, turning SQLite's constraint errors into ``SQLError/constraint(kind:message:)``.
    public static func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            let kind: SQLError.ConstraintKind? = switch error.extendedResultCode {
            case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY: .unique
            case .SQLITE_CONSTRAINT_FOREIGNKEY: .foreignKey
            case .SQLITE_CONSTRAINT_CHECK: .check
            case .SQLITE_CONSTRAINT_NOTNULL: .notNull
            default: error.resultCode == .SQLITE_CONSTRAINT ? .other : nil
            }
            if let kind { throw SQLError.constraint(kind: kind, message: error.message ?? "\(error)") }
            throw error
        }
    }
}

/// A GRDB connection inside a transaction. Statements are prepared once per connection and kept.
public struct SQLiteSession: SQLSession {
    public let db: Database
    public var dialect: SQLDialect { .sqlite }

    public init(db: Database) { self.db = db }

    public func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        let statement = try db.cachedStatement(sql: sql)
        try statement.execute(arguments: StatementArguments(arguments.map(\.databaseValue)))
        return db.changesCount
    }

    public func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let statement = try db.cachedStatement(sql: sql)
        let columns = statement.columnNames
        return try Row.fetchAll(statement, arguments: StatementArguments(arguments.map(\.databaseValue))).map { row in
            SQLRow(columns: columns, values: row.databaseValues.map(SQLValue.init))
        }
    }
}

extension SQLValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }

    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let value): self = .text(value)
        case .blob(let data): self = .blob(Array(data))
        }
    }
}
