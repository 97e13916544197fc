import Foundation

/// Which SQL a database speaks. The lobby writes statements both understand and branches on this
/// only where they differ (its schema, upserts of a few kinds, date functions).
public enum SQLDialect: String, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue == "sqlite" ? "SQLite" : "PostgreSQL" }
}

/// One connection inside one transaction. Statements use `?` for their arguments on both engines
/// (PostgreSQL's `$1, $2, …` are written for it). Calls block the calling thread, which is never
/// a cooperative or event-loop thread: ``SQLDatabase`` runs transaction bodies on threads of its
/// own.
public protocol SQLSession {
    var dialect: SQLDialect { get }
    /// Runs a statement that returns no rows; answers how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int
    /// Runs a query and returns all its rows.
    func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]
}

extension SQLSession {
    @discardableResult
    public func execute(_ sql: String, _ arguments: any SQLValueConvertible...) throws -> Int {
        try execute(sql, arguments.map(\.sqlValue))
    }

    public func fetchAll(_ sql: String, _ arguments: any SQLValueConvertible...) throws -> [SQLRow] {
        try fetchAll(sql, arguments.map(\.sqlValue))
    }

    /// The first row, or nil.
    public func fetchOne(_ sql: String, _ arguments: [SQLValue]) throws -> SQLRow? {
        try fetchAll(sql, arguments).first
    }

    public func fetchOne(_ sql: String, _ arguments: any SQLValueConvertible...) throws -> SQLRow? {
        try fetchAll(sql, arguments.map(\.sqlValue)).first
    }

    /// The first column of the first row as a `T`; nil when there is no row or it is NULL.
    public func fetchValue<T: SQLValueConvertible>(_ type: T.Type = T.self, _ sql: String, _ arguments: [SQLValue]) throws -> T? {
        guard let row = try fetchAll(sql, arguments).first else { return nil }
        if row[0].isNull { return nil }
        return try row.get(0, as: T.self)
    }

    public func fetchValue<T: SQLValueConvertible>(_ type: T.Type = T.self, _ sql: String, _ arguments: any SQLValueConvertible...) throws -> T? {
        try fetchValue(type, sql, arguments.map(\.sqlValue))
    }

    /// Locks the rows of `table` with these ids until the transaction ends, in id order (so two
    /// transactions locking overlapping sets never deadlock): a rule that checks these rows before
    /// changing others takes this first. Nothing on SQLite, whose one writer holds everything.
    public func lock(_ table: String, ids: [Int64]) throws {
        guard dialect == .postgres, !ids.isEmpty else { return }
        let sorted = Array(Set(ids)).sorted()
        let marks = Array(repeating: "?", count: sorted.count).joined(separator: ", ")
        // NO KEY UPDATE: excludes other lockers and writers of these rows, but not the KEY SHARE
        // locks that inserting a row referring to them takes, so it never waits on a foreign key.
        _ = try fetchAll("SELECT id FROM \(table) WHERE id IN (\(marks)) ORDER BY id FOR NO KEY UPDATE", sorted.map(SQLValue.integer))
    }

    /// Runs each statement of a script (statements end with `;`) in order.
    public func executeScript(_ script: String) throws {
        for statement in SQLText.statements(of: script) { try execute(statement, [SQLValue]()) }
    }
}

/// A database the lobby keeps its state in: SQLite (``SQLiteDatabase``) or PostgreSQL
/// (``PostgresDatabase``).
///
/// A `write` body runs in one transaction that either commits whole or not at all. It may run
/// more than once: PostgreSQL aborts a serializable transaction that conflicts with another, and
/// the body is then run again on a fresh snapshot. So a body keeps its effects inside the
/// database until it returns.
public protocol SQLDatabase: Sendable {
    var dialect: SQLDialect { get }
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T
    /// A read-only transaction on one consistent snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T
    /// Applies the migrations not applied yet, in order, each in a transaction of its own, and
    /// records them; several processes starting at once apply each exactly once.
    func migrate(_ migrations: [SQLMigration]) async throws
    /// Closes every connection; nothing may be called after.
    func close() async throws
}

/// A change to the schema, with the SQL for each engine.
public struct SQLMigration: Sendable {
    public let name: String
    public let sqlite: String
    public let postgres: String

    public init(_ name: String, sqlite: String, postgres: String) {
        self.name = name
        self.sqlite = sqlite
        self.postgres = postgres
    }

    /// A migration written in SQL both engines accept.
    public init(_ name: String, sql: String) {
        self.init(name, sqlite: sql, postgres: sql)
    }

    public func script(for dialect: SQLDialect) -> String { dialect == .sqlite ? sqlite : postgres }
}

/// What went wrong, in words that say where.
public enum SQLError: Error, CustomStringConvertible, Equatable {
    case noSuchColumn(String, columns: [String])
    case wrongType(column: String, value: SQLValue, wanted: String)
    /// A constraint refused a change (unique, foreign key, check, not null).
    case constraint(kind: ConstraintKind, message: String)
    /// The server refused a statement (SQLSTATE `code`).
    case server(code: String, message: String, statement: String)
    /// A serializable transaction kept conflicting with others after `attempts` tries.
    case tooManyConflicts(attempts: Int)
    case connection(String)
    case badURL(String, reason: String)
    case closed

    public enum ConstraintKind: String, Sendable { case unique, foreignKey, check, notNull, other }

    public var description: String {
        switch self {
        case .noSuchColumn(let name, let columns):
            "the result has no column \u{201C}\(name)\u{201D} (it has \(columns.joined(separator: ", ")))"
        case .wrongType(let column, let value, let wanted):
            "column \u{201C}\(column)\u{201D} holds \(value), not a \(wanted)"
        case .constraint(let kind, let message):
            "the database refused the change (\(kind.rawValue) constraint): \(message)"
        case .server(let code, let message, let statement):
            "PostgreSQL refused a statement (SQLSTATE \(code)): \(message) — in: \(statement.prefix(200))"
        case .tooManyConflicts(let attempts):
            "a transaction conflicted with others \(attempts) times in a row; try again"
        case .connection(let reason):
            "cannot reach the database: \(reason)"
        case .badURL(let url, let reason):
            "the database address \u{201C}\(url)\u{201D} is not usable: \(reason). Give a SQLite file path or postgres://USER@HOST[:PORT]/DATABASE (or postgres://USER@/DATABASE?host=/run/postgresql for a socket)"
        case .closed:
            "the database is closed"
        }
    }
}
