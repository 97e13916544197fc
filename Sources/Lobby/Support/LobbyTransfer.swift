import Foundation
import GRDB
import LobbyDatabase
import Logging

/// Moves a SQLite lobby into an empty PostgreSQL database (`nearplay lobby migrate`, issue 23).
///
/// The steps, in order:
///
/// 1. **Snapshot.** SQLite's online backup copies the lobby file, read through a read-only
///    connection, into a scratch file, and the copy is migrated to the newest schema (as
///    `LobbyStore(path:)` would migrate the file itself). The original is only read, and the copy
///    is one consistent moment even if a lobby still serves on the file (stop it first anyway:
///    what it writes afterwards is not moved).
/// 2. **Target.** Connects to the PostgreSQL database, applies ``PostgresSchema`` (the migrations
///    `LobbyStore.open` applies) and refuses to go on unless every table to be filled is empty:
///    the copy keeps every id, so it cannot merge two lobbies.
/// 3. **Order.** The tables to copy are SQLite's, less `grdb_migrations` and SQLite's own
///    (`sqlite_…`), each placed after every table it refers to (`PRAGMA foreign_key_list`), so
///    that PostgreSQL's foreign keys hold at every insert. Each of their columns must exist on
///    PostgreSQL (names compare without case: PostgreSQL folds the unquoted camelCase names).
/// 4. **Copy.** Each table in batches read in primary-key order (rowid order for a table without
///    one), of at most `batchSize` rows and about ``batchBytes`` bytes. Each batch is one
///    transaction holding one multi-row INSERT. Values are converted to the PostgreSQL column's
///    type: an integer into a DOUBLE PRECISION column becomes a double, a blob stays bytes for
///    BYTEA, and anything that cannot be converted without loss stops the move naming the row's
///    table and column. Ids are copied as they are, into identity columns too. The user triggers
///    on a table (`unlock_counted` and `unlock_uncounted` on `unlock`) are disabled inside its
///    batches' transactions: the counts they keep (`unlockCount`, `unlockTally`) are tables
///    copied as they are.
/// 5. **Sequences.** Each identity column's sequence is set past the highest id copied, and past
///    SQLite's AUTOINCREMENT high-water mark (`sqlite_sequence`, which remembers the ids of
///    deleted rows, such as pruned events): new rows get new ids, and the events feed's cursors
///    keep growing.
/// 6. **Check.** Rows are counted table by table on both sides; any difference is an error.
///
/// A move that fails part way leaves the rows copied so far: drop and create the database again
/// before trying once more (step 2 refuses a database that holds rows).
public struct LobbyTransfer: Sendable {
    /// The SQLite lobby file; only read.
    public let sqlitePath: String
    /// The PostgreSQL database, `postgres://USER@HOST[:PORT]/DATABASE`.
    public let postgresURL: String
    /// Where the snapshot of the SQLite file is made (and removed afterwards): it takes as much
    /// room as the file.
    public var scratchDirectory: URL
    /// The most rows one INSERT carries.
    public var batchSize: Int
    /// About how many bytes of values one batch carries at most: tables of large rows (photos)
    /// go in smaller batches.
    public var batchBytes = 8 << 20
    public var logger: Logger

    public init(
        from sqlitePath: String, to postgresURL: String, scratchDirectory: URL = FileManager.default.temporaryDirectory,
        batchSize: Int = 1000, logger: Logger = Logger(label: "nearplay.lobby.migrate")
    ) {
        self.sqlitePath = sqlitePath
        self.postgresURL = postgresURL
        self.scratchDirectory = scratchDirectory
        self.batchSize = max(1, batchSize)
        self.logger = logger
    }

    /// What was moved: each table's rows on both sides, and where each identity sequence now
    /// stands.
    public struct Report: Sendable, Equatable {
        public struct Table: Sendable, Equatable {
            public let name: String
            public let sqliteRows: Int
            public let postgresRows: Int
        }

        /// In the order they were copied.
        public let tables: [Table]
        /// Each table with an identity id and the last id its sequence has handed out (so the
        /// next row gets the one after).
        public let sequences: [String: Int64]

        public var rows: Int { tables.reduce(0) { $0 + $1.postgresRows } }
    }

    /// Why a move did not happen or did not complete.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// No file at the path.
        case noSQLiteFile(String)
        /// The file is not a lobby database (no `player` table).
        case notALobby(String)
        /// `postgresURL` is not a PostgreSQL URL.
        case notPostgres(String)
        /// The target holds rows already: table name → rows.
        case targetNotEmpty([String: Int])
        /// A SQLite table or column with no counterpart in the PostgreSQL schema.
        case schemaMismatch(String)
        /// The tables refer to each other in a circle; no order satisfies the foreign keys.
        case foreignKeyCycle([String])
        /// A value the PostgreSQL column's type cannot hold.
        case unconvertible(table: String, column: String, value: String, type: String)
        /// Tables whose row counts differ after the copy.
        case countsDiffer([Report.Table])

        public var description: String {
            switch self {
            case .noSQLiteFile(let path):
                return "There is no SQLite lobby at \(path): give the path of the lobby's database file (the --db the lobby runs with, ./nearplay-lobby.sqlite by default)."
            case .notALobby(let path):
                return "\(path) is not a lobby database (it has no player table): give the file the lobby runs with."
            case .notPostgres(let url):
                return "\(url) is not a PostgreSQL address: give postgres://USER@HOST[:PORT]/DATABASE (or postgres://USER@/DATABASE?host=/run/postgresql for a socket)."
            case .targetNotEmpty(let counts):
                let players = counts["player"] ?? 0, games = counts["game"] ?? 0
                let others = counts.keys.filter { $0 != "player" && $0 != "game" }.count
                let held = "\(players) player\(players == 1 ? "" : "s"), \(games) game\(games == 1 ? "" : "s")"
                    + (others == 0 ? "" : ", and rows in \(others) other table\(others == 1 ? "" : "s")")
                return "The PostgreSQL database already holds a lobby (\(held)): migrate into a new, empty database (createdb NAME), "
                    + "or drop and create this one again if it holds only an earlier, failed migration."
            case .schemaMismatch(let what):
                return "The PostgreSQL schema has no \(what), which the SQLite lobby has: migrate with the nearplay version that last ran the lobby, or a newer one."
            case .foreignKeyCycle(let tables):
                return "The tables \(tables.joined(separator: ", ")) refer to each other in a circle, so no order of copying satisfies their foreign keys; this lobby's schema is not one nearplay made."
            case .unconvertible(let table, let column, let value, let type):
                return "\(table).\(column) holds \(value.prefix(80)), which a PostgreSQL \(type) column cannot hold: correct that row in the SQLite file (or a copy of it) and migrate again into a new database."
            case .countsDiffer(let tables):
                let list = tables.map { "\($0.name): \($0.sqliteRows) in SQLite, \($0.postgresRows) in PostgreSQL" }.joined(separator: "; ")
                return "The copy is incomplete (\(list)): drop and create the PostgreSQL database again and migrate once more."
            }
        }
    }

    /// One SQLite table to copy, with what PostgreSQL calls it and its columns.
    struct Table: Sendable {
        /// SQLite's name (camelCase).
        let name: String
        /// SQLite's column names.
        let columns: [String]
        /// The PostgreSQL type of each column, in the order of `columns`.
        let types: [String]
        /// The columns batches are read in the order of: the primary key, or `rowid`.
        let key: [String]
        /// Tables it refers to.
        let references: Set<String>

        var postgresName: String { name.lowercased() }
    }

    /// Runs the steps of the type's comment; answers the per-table counts once they agree.
    public func run() async throws -> Report {
        guard PostgresDatabase.isURL(postgresURL) else { throw Failure.notPostgres(postgresURL) }
        guard FileManager.default.fileExists(atPath: sqlitePath) else { throw Failure.noSQLiteFile(sqlitePath) }
        let snapshotPath = scratchDirectory.appendingPathComponent("nearplay-migrate-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: snapshotPath + suffix) }
        }

        // 1. Snapshot, migrated.
        try await Self.onOwnThread { [sqlitePath] in try Self.snapshot(sqlitePath, into: snapshotPath) }
        let sqlite = try SQLiteDatabase(path: snapshotPath)
        defer { try? sqlite.pool.close() }
        try await Self.onOwnThread { try LobbyMigrations.migrator.migrate(sqlite.pool) }
        logger.info("made a snapshot of \(sqlitePath) at the newest schema")

        // 2. Target.
        let postgres = try await PostgresDatabase(url: postgresURL, poolSize: 1, isolation: .readCommittedWithLocks, logger: logger)
        do {
            let report = try await copy(from: sqlite, to: postgres)
            try await postgres.close()
            return report
        } catch {
            try? await postgres.close()
            throw error
        }
    }

    private func copy(from sqlite: SQLiteDatabase, to postgres: PostgresDatabase) async throws -> Report {
        try await postgres.migrate(LobbyMigrations.postgres)
        let postgresTypes = try await postgres.read { db in try Self.columnTypes(db) }

        // 3. Order (and the columns of each table), then the emptiness check over those tables.
        let tables = try Self.foreignKeyOrder(try await sqlite.read { db in try Self.tables(db, postgresTypes: postgresTypes) })
        let occupied = try await postgres.read { db in
            var counts: [String: Int] = [:]
            for table in tables {
                let rows = try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(Self.quoted(table.postgresName))") ?? 0
                if rows > 0 { counts[table.name] = rows }
            }
            return counts
        }
        guard occupied.isEmpty else { throw Failure.targetNotEmpty(occupied) }
        let triggered = try await postgres.read { db in
            Set(try db.fetchAll("SELECT DISTINCT event_object_table FROM information_schema.triggers WHERE trigger_schema = current_schema()")
                .map { try $0.get(0, as: String.self) })
        }

        // 4. Copy.
        for table in tables {
            let copied = try await copyRows(of: table, from: sqlite, to: postgres, disablingTriggers: triggered.contains(table.postgresName))
            logger.info("copied \(table.name)", metadata: ["rows": "\(copied)"])
        }

        // 5. Sequences.
        let sequences = try await moveSequences(postgres, sqlite: sqlite, tables: tables)

        // 6. Check.
        var counted: [Report.Table] = []
        for table in tables {
            let source = try await sqlite.read { db in try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(Self.quoted(table.name))") ?? 0 }
            let target = try await postgres.read { db in try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(Self.quoted(table.postgresName))") ?? 0 }
            counted.append(Report.Table(name: table.name, sqliteRows: source, postgresRows: target))
        }
        let differing = counted.filter { $0.sqliteRows != $0.postgresRows }
        guard differing.isEmpty else { throw Failure.countsDiffer(differing) }
        return Report(tables: counted, sequences: sequences)
    }

    // MARK: - Step 1: the snapshot

    /// Copies the lobby at `path`, read-only, into a new file at `copyPath` with SQLite's online
    /// backup (one consistent snapshot, the WAL's committed pages included).
    static func snapshot(_ path: String, into copyPath: String) throws {
        var readOnly = Configuration()
        readOnly.readonly = true
        let source = try DatabaseQueue(path: path, configuration: readOnly)
        defer { try? source.close() }
        let isLobby = (try? source.read { db in try db.tableExists("player") }) ?? false
        guard isLobby else { throw Failure.notALobby(path) }
        let copy = try DatabaseQueue(path: copyPath)
        defer { try? copy.close() }
        try source.backup(to: copy)
    }

    /// Runs blocking SQLite work (the backup, the migrations) off the cooperative thread pool.
    private static func onOwnThread(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    // MARK: - Steps 2 and 3: the tables and their order

    /// PostgreSQL's columns: table → column → type (`bigint`, `double precision`, `text`, `bytea`),
    /// all in lower case.
    static func columnTypes(_ db: any SQLSession) throws -> [String: [String: String]] {
        var types: [String: [String: String]] = [:]
        for row in try db.fetchAll("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()") {
            types[try row.get(0, as: String.self), default: [:]][try row.get(1, as: String.self)] = try row.get(2, as: String.self)
        }
        return types
    }

    /// SQLite's lobby tables in the order `sqlite_master` lists them, each with its columns, their
    /// PostgreSQL types, its key and what it refers to.
    static func tables(_ db: any SQLSession, postgresTypes: [String: [String: String]]) throws -> [Table] {
        let names = try db.fetchAll("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'grdb_migrations'
            ORDER BY rowid
            """).map { try $0.get(0, as: String.self) }
        return try names.map { name in
            guard let targetColumns = postgresTypes[name.lowercased()] else { throw Failure.schemaMismatch("table \(name)") }
            let info = try db.fetchAll("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", name)
            let columns = try info.map { try $0.get("name", as: String.self) }
            let types = try columns.map { column in
                guard let type = targetColumns[column.lowercased()] else { throw Failure.schemaMismatch("column \(name).\(column)") }
                return type
            }
            let key = try info.filter { try $0.get("pk", as: Int.self) > 0 }
                .sorted { try $0.get("pk", as: Int.self) < $1.get("pk", as: Int.self) }
                .map { try $0.get("name", as: String.self) }
            let references = try db.fetchAll("SELECT \"table\" FROM pragma_foreign_key_list(?)", name).map { try $0.get(0, as: String.self).lowercased() }
            return Table(name: name, columns: columns, types: types, key: key.isEmpty ? ["rowid"] : key,
                         references: Set(references).subtracting([name.lowercased()]))
        }
    }

    /// `tables` with each one after every table it refers to, otherwise in their given order.
    static func foreignKeyOrder(_ tables: [Table]) throws -> [Table] {
        var ordered: [Table] = []
        var placed: Set<String> = []
        var waiting = tables
        let known = Set(tables.map(\.postgresName))
        while !waiting.isEmpty {
            // References to tables not copied (none in a lobby) cannot be waited for.
            guard let next = waiting.firstIndex(where: { $0.references.intersection(known).isSubset(of: placed) }) else {
                throw Failure.foreignKeyCycle(waiting.map(\.name))
            }
            let table = waiting.remove(at: next)
            ordered.append(table)
            placed.insert(table.postgresName)
        }
        return ordered
    }

    // MARK: - Step 4: the rows

    /// Copies `table` batch by batch; answers the rows copied.
    private func copyRows(of table: Table, from sqlite: SQLiteDatabase, to postgres: PostgresDatabase, disablingTriggers: Bool) async throws -> Int {
        let columnList = table.columns.map(Self.quoted).joined(separator: ", ")
        let keyList = table.key.map(Self.quoted).joined(separator: ", ")
        let keyMarks = Array(repeating: "?", count: table.key.count).joined(separator: ", ")
        let from = Self.quoted(table.name)
        // PostgreSQL takes at most 65,535 arguments a statement.
        let rowsPerBatch = try await sqlite.read { [batchSize, batchBytes] db in
            let sizes = table.columns.map { "COALESCE(length(\(Self.quoted($0))), 0)" }.joined(separator: " + ")
            let average = try db.fetchValue(Double.self, "SELECT AVG(\(sizes)) FROM \(from)") ?? 0
            let byBytes = average > 0 ? Int(Double(batchBytes) / average) : batchSize
            return max(1, min(batchSize, byBytes, 60_000 / table.columns.count))
        }
        let insert = "INSERT INTO \(Self.quoted(table.postgresName)) (\(table.columns.map { Self.quoted($0.lowercased()) }.joined(separator: ", "))) VALUES "
        let rowMarks = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"

        var after: [SQLValue]?
        var copied = 0
        while true {
            let rows = try await sqlite.read { [after] db in
                let since = after == nil ? "" : "WHERE (\(keyList)) > (\(keyMarks))"
                return try db.fetchAll("SELECT \(columnList), \(keyList) FROM \(from) \(since) ORDER BY \(keyList) LIMIT ?",
                                       (after ?? []) + [.integer(Int64(rowsPerBatch))])
            }
            guard !rows.isEmpty else { break }
            let width = table.columns.count
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(rows.count * width)
            for row in rows {
                for (index, value) in row.values.prefix(width).enumerated() {
                    arguments.append(try Self.converted(value, to: table.types[index], table: table.name, column: table.columns[index]))
                }
            }
            let statement = insert + Array(repeating: rowMarks, count: rows.count).joined(separator: ", ")
            let target = Self.quoted(table.postgresName)
            try await postgres.write { [arguments] db in
                if disablingTriggers { try db.execute("ALTER TABLE \(target) DISABLE TRIGGER USER", [SQLValue]()) }
                try db.execute(statement, arguments)
                if disablingTriggers { try db.execute("ALTER TABLE \(target) ENABLE TRIGGER USER", [SQLValue]()) }
            }
            copied += rows.count
            after = Array(rows[rows.count - 1].values.suffix(table.key.count))
            if rows.count < rowsPerBatch { break }
        }
        return copied
    }

    /// `value` as a column of PostgreSQL type `type` takes it.
    static func converted(_ value: SQLValue, to type: String, table: String, column: String) throws -> SQLValue {
        func refuse() -> Failure { .unconvertible(table: table, column: column, value: value.description, type: type) }
        switch (type, value) {
        case (_, .null):
            return .null
        case ("bigint", .integer):
            return value
        case ("bigint", .real(let number)):
            guard number.rounded() == number, abs(number) < 9.2e18 else { throw refuse() }
            return .integer(Int64(number))
        case ("bigint", .text(let text)):
            guard let number = Int64(text) else { throw refuse() }
            return .integer(number)
        case ("double precision", .real):
            return value
        case ("double precision", .integer(let number)):
            return .real(Double(number))
        case ("double precision", .text(let text)):
            guard let number = Double(text) else { throw refuse() }
            return .real(number)
        case ("text", .text):
            return value
        case ("text", .integer(let number)):
            return .text(String(number))
        case ("text", .real(let number)):
            return .text(String(number))
        case ("text", .blob(let bytes)):
            guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\0") else { throw refuse() }
            return .text(text)
        case ("bytea", .blob):
            return value
        case ("bytea", .text(let text)):
            return .blob(Array(text.utf8))
        default:
            throw refuse()
        }
    }

    // MARK: - Step 5: the sequences

    /// Sets each identity column's sequence to the highest id copied or the highest SQLite ever
    /// handed out, whichever is greater; answers table → that id (0 for an empty table, whose
    /// next id is 1).
    private func moveSequences(_ postgres: PostgresDatabase, sqlite: SQLiteDatabase, tables: [Table]) async throws -> [String: Int64] {
        let highWater = try await sqlite.read { db -> [String: Int64] in
            guard try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence')") == true else { return [:] }
            var marks: [String: Int64] = [:]
            for row in try db.fetchAll("SELECT name, seq FROM sqlite_sequence") {
                marks[try row.get(0, as: String.self).lowercased()] = try row.get(1, as: Int64?.self) ?? 0
            }
            return marks
        }
        let names = Dictionary(tables.map { ($0.postgresName, $0.name) }, uniquingKeysWith: { first, _ in first })
        return try await postgres.write { db in
            let identities = try db.fetchAll("""
                SELECT table_name, column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name
                """)
            var moved: [String: Int64] = [:]
            for row in identities {
                let table = try row.get(0, as: String.self), column = try row.get(1, as: String.self)
                guard let name = names[table] else { continue }
                let highest = try db.fetchValue(Int64.self, "SELECT MAX(\(Self.quoted(column))) FROM \(Self.quoted(table))") ?? 0
                let last = max(highest, highWater[table] ?? 0)
                // setval(…, 1, false): the next id is 1, for a table still empty.
                try db.execute("SELECT setval(pg_get_serial_sequence(?, ?), ?, \(last > 0))", Self.quoted(table), column, max(last, 1))
                moved[name] = last
            }
            return moved
        }
    }

    /// `name` as an identifier in double quotes (which both engines take); `rowid` as it is.
    static func quoted(_ name: String) -> String {
        name == "rowid" ? name : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
