import DatabaseTestSupport
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Holds ``PostgresSchema`` to the schema the SQLite migrations build: a migration added to one
/// engine and not the other fails here.
@Suite struct PostgresSchemaTests {
    /// Tables, columns (type, NOT NULL, default, identity), CHECK counts, indexes, foreign keys
    /// (with ON DELETE) and triggers, with SQLite's translated by the rules PostgresSchema states.
    @Test func postgresSchemaMatchesSQLites() async throws {
        let lobby = try await TestLobby(engine: .sqlite)
        let sqlite = try SQLiteDatabase(path: lobby.path)
        let expected = try await sqlite.read { db in try SchemaShape.expected(fromSQLite: db) }
        try await sqlite.close()
        let postgres = try await PostgresDatabase(url: PrivatePostgres.shared().createDatabase())
        try await postgres.migrate(PostgresSchema.migrations)
        let actual = try await postgres.read { db in try SchemaShape(postgres: db) }
        try await postgres.close()

        #expect(expected.problems == [])
        // Something to compare: a reader that found nothing would make every comparison pass.
        #expect(expected.columns.count > 30)
        #expect(expected.columns["player"]?["username"] != nil)
        #expect(Set(actual.columns.keys) == Set(expected.columns.keys), "the same tables")
        for table in Set(expected.columns.keys).intersection(actual.columns.keys).sorted() {
            let expectedColumns = expected.columns[table] ?? [:]
            let actualColumns = actual.columns[table] ?? [:]
            #expect(Set(actualColumns.keys) == Set(expectedColumns.keys), "the columns of \(table)")
            for (name, column) in expectedColumns.sorted(by: { $0.key < $1.key }) {
                guard let other = actualColumns[name] else { continue }
                #expect(other == column, "\(table).\(name)")
            }
            #expect(actual.checks[table, default: 0] == expected.checks[table, default: 0], "CHECK constraints of \(table)")
        }
        #expect(actual.indexes.sorted() == expected.indexes.sorted(), "indexes (keys, uniqueness, partial WHERE)")
        #expect(actual.indexNames.isSuperset(of: expected.indexNames), "indexes the migrations name")
        #expect(actual.foreignKeys.sorted() == expected.foreignKeys.sorted(), "foreign keys")
        #expect(actual.triggers == expected.triggers, "triggers")
    }

    /// Two lobbies starting on one database: the second finds the schema recorded and applies
    /// nothing (re-running it would fail on the existing tables).
    @Test func theSchemaIsAppliedOnce() async throws {
        let url = try await PrivatePostgres.shared().createDatabase()
        for _ in 0..<2 {
            let database = try await PostgresDatabase(url: url)
            try await database.migrate(PostgresSchema.migrations)
            try await database.close()
        }
        let database = try await PostgresDatabase(url: url)
        let recorded = try await database.read { db in
            try db.fetchAll("SELECT identifier FROM schema_migrations", [SQLValue]()).map { try $0.get(0, as: String.self) }
        }
        #expect(recorded == PostgresSchema.migrations.map(\.name))
        let tables = try await database.read { db in
            try db.fetchValue(Int64.self, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_migrations'")
        }
        #expect(tables == Int64(PostgresSchema.migrations.map { $0.postgres.matches(of: #/CREATE TABLE/#).count }.reduce(0, +)))
        try await database.close()
    }

    /// The same statements leave the same rows on both engines where the schema itself acts:
    /// the unlock triggers keep their counts, and a username or location name taken in another
    /// case is refused.
    @Test func triggersAndCaseInsensitiveNamesActAlike() async throws {
        let lobby = try await TestLobby(engine: .sqlite)
        let sqlite = try SQLiteDatabase(path: lobby.path)
        let postgres = try await PostgresDatabase(url: PrivatePostgres.shared().createDatabase())
        try await postgres.migrate(PostgresSchema.migrations)
        for database in [sqlite as any SQLDatabase, postgres] {
            let rows = try await database.write { db in
                // Fresh tables on both engines: the players are 1, 2 and 3.
                for (minor, name) in ["ada", "Bob", "cyd"].enumerated() {
                    try db.execute("""
                        INSERT INTO player (username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, createdAt)
                        VALUES (?, 'F', 'L', ?, 'hash', 7, ?, 0)
                        """, name, name + "@example.org", Int64(minor))
                }
                try db.execute("INSERT INTO location (name, ownerId, timeZone, createdAt) VALUES ('Hall', 1, 'UTC', 0)")
                for (owner, unlocked) in [(1, 2), (1, 3), (2, 1), (3, 1), (3, 2)] {
                    try db.execute("INSERT INTO unlock (ownerId, unlockedId, persistent, since) VALUES (?, ?, 0, 0)", Int64(owner), Int64(unlocked))
                }
                try db.execute("DELETE FROM unlock WHERE ownerId = 3 AND unlockedId = 1")
                let counts = try db.fetchAll("SELECT playerId, unlocked FROM unlockCount ORDER BY playerId", [SQLValue]())
                let tally = try db.fetchAll("SELECT unlocked, players FROM unlockTally WHERE players > 0 ORDER BY unlocked", [SQLValue]())
                return (counts.map { "player \($0[0]): \($0[1])" }, tally.map { "\($0[1]) with \($0[0])" })
            }
            #expect(rows.0 == ["player 1: 2", "player 2: 1", "player 3: 1"], "\(database.dialect)")
            #expect(rows.1 == ["2 with 1", "1 with 2"], "\(database.dialect)")
            for statement in [
                "INSERT INTO player (username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, createdAt) VALUES ('BOB', 'F', 'L', 'e', 'h', 8, 1, 0)",
                "INSERT INTO location (name, ownerId, timeZone, createdAt) VALUES ('hALL', 2, 'UTC', 0)",
            ] {
                await #expect("\(database.dialect): \(statement)") {
                    try await database.write { db in try db.execute(statement, [SQLValue]()) }
                } throws: { error in
                    guard case SQLError.constraint(.unique, let message) = error else { return false }
                    return message.contains("name")
                }
            }
            try await database.close()
        }
    }
}

/// A schema in PostgreSQL's terms, read from PostgreSQL's catalog or translated from what
/// SQLite's pragmas report by the rules ``PostgresSchema`` states. Names are lower-cased.
struct SchemaShape {
    struct Column: Equatable, CustomStringConvertible {
        var type: String
        var notNull: Bool
        var defaultValue: String?
        var identity: Bool
        var description: String {
            "\(type)\(notNull ? " NOT NULL" : "")\(defaultValue.map { " DEFAULT \($0)" } ?? "")\(identity ? " IDENTITY" : "")"
        }
    }

    /// An index by what it does: `keys` are columns or expressions, with " DESC" where descending.
    struct Index: Hashable, Comparable, CustomStringConvertible {
        var table: String
        var keys: [String]
        var unique: Bool
        var predicate: String?
        var description: String { "\(table)(\(keys.joined(separator: ", ")))\(unique ? " UNIQUE" : "")\(predicate.map { " WHERE \($0)" } ?? "")" }
        static func < (a: Index, b: Index) -> Bool { a.description < b.description }
    }

    struct ForeignKey: Hashable, Comparable, CustomStringConvertible {
        var table: String
        var columns: [String]
        var parent: String
        var parentColumns: [String]
        var onDelete: String
        var description: String { "\(table)(\(columns.joined(separator: ", "))) → \(parent)(\(parentColumns.joined(separator: ", "))) ON DELETE \(onDelete)" }
        static func < (a: ForeignKey, b: ForeignKey) -> Bool { a.description < b.description }
    }

    var columns: [String: [String: Column]] = [:]
    var indexes: [Index] = []
    /// Indexes created by name (not those standing for a key or a UNIQUE).
    var indexNames: Set<String> = []
    var foreignKeys: [ForeignKey] = []
    var checks: [String: Int] = [:]
    /// "name on table: timing event".
    var triggers: Set<String> = []
    /// What the reader could not translate (read off a database thread, recorded by the test).
    var problems: [String] = []

    // MARK: PostgreSQL

    init(postgres db: any SQLSession) throws {
        let none = [SQLValue]()
        for row in try db.fetchAll("""
            SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, column_default::text, is_identity::text
            FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
            """, none) {
            let table: String = try row.get(0), name: String = try row.get(1)
            columns[table, default: [:]][name] = Column(
                type: try row.get(2), notNull: try row.get(3, as: String.self) == "NO",
                defaultValue: try row.get(4, as: String?.self).map(Self.normalizedDefault),
                identity: try row.get(5, as: String.self) == "YES")
        }
        for row in try db.fetchAll("""
            SELECT t.relname::text, i.relname::text, ix.indisunique, ix.indisprimary OR c.oid IS NOT NULL,
                   pg_get_expr(ix.indpred, ix.indrelid, true),
                   array_to_string(ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true)
                                               || CASE WHEN ix.indoption[k - 1] & 1 = 1 THEN ' DESC' ELSE '' END
                                         FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k), '|')
            FROM pg_index ix
            JOIN pg_class i ON i.oid = ix.indexrelid
            JOIN pg_class t ON t.oid = ix.indrelid
            LEFT JOIN pg_constraint c ON c.conindid = ix.indexrelid AND c.contype IN ('p', 'u')
            WHERE t.relnamespace = 'public'::regnamespace AND t.relname <> 'schema_migrations'
            """, none) {
            let keys = try row.get(5, as: String.self).split(separator: "|").map { $0.replacingOccurrences(of: "\"", with: "").lowercased().replacing(#/ desc$/#, with: " DESC") }
            indexes.append(Index(table: try row.get(0), keys: keys, unique: try row.get(2, as: Bool.self),
                                 predicate: try row.get(4, as: String?.self).map(Self.normalizedPredicate)))
            if !(try row.get(3, as: Bool.self)) { indexNames.insert(try row.get(1)) }
        }
        for row in try db.fetchAll("""
            SELECT c.conrelid::regclass::text, c.confrelid::regclass::text, c.confdeltype::text,
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
                       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.position), '|'),
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, position)
                       JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.position), '|')
            FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
            """, none) {
            let actions = ["a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"]
            foreignKeys.append(ForeignKey(
                table: try row.get(0), columns: try row.get(3, as: String.self).split(separator: "|").map(String.init),
                parent: try row.get(1), parentColumns: try row.get(4, as: String.self).split(separator: "|").map(String.init),
                onDelete: actions[try row.get(2, as: String.self)] ?? "?"))
        }
        for row in try db.fetchAll("""
            SELECT conrelid::regclass::text, COUNT(*) FROM pg_constraint
            WHERE contype = 'c' AND connamespace = 'public'::regnamespace GROUP BY 1
            """, none) {
            checks[try row.get(0)] = try row.get(1, as: Int.self)
        }
        for row in try db.fetchAll("""
            SELECT trigger_name::text, event_object_table::text, action_timing::text, event_manipulation::text
            FROM information_schema.triggers WHERE trigger_schema = 'public'
            """, none) {
            triggers.insert("\(try row.get(0, as: String.self)) on \(try row.get(1, as: String.self)): \(try row.get(2, as: String.self)) \(try row.get(3, as: String.self))")
        }
    }

    // MARK: SQLite, translated

    /// PostgreSQL types of SQLite's declared ones, as ``PostgresSchema`` translates them.
    static let postgresTypes = [
        "INTEGER": "bigint", "REAL": "double precision", "DOUBLE": "double precision", "TEXT": "text", "BLOB": "bytea",
        "BOOLEAN": "bigint",
    ]
    /// Columns typed by what they hold rather than by their declaration.
    static let postgresTypeExceptions = ["lobbySetting.value": "double precision"]

    private init() {}

    static func expected(fromSQLite db: any SQLSession) throws -> SchemaShape {
        var shape = SchemaShape()
        let tables = try db.fetchAll("""
            SELECT name, sql FROM sqlite_master
            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
            """, [SQLValue]())
        var primaryKeys: [String: [String]] = [:]
        for table in tables {
            let name: String = try table.get("name")
            let sql: String = try table.get("sql")
            let key = name.lowercased()
            let info = try db.fetchAll("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", name)
            let autoincrement = sql.range(of: "AUTOINCREMENT", options: .caseInsensitive) != nil
            var booleans = 0
            var keyColumns: [(Int, String)] = []
            for column in info {
                let columnName: String = try column.get("name")
                let declared = try column.get("type", as: String.self).uppercased()
                let primaryKey = try column.get("pk", as: Int.self)
                if primaryKey > 0 { keyColumns.append((primaryKey, columnName.lowercased())) }
                if declared == "BOOLEAN" { booleans += 1 }
                let type = postgresTypes[declared] ?? postgresTypeExceptions["\(name).\(columnName)"]
                if type == nil { shape.problems.append("\(name).\(columnName) is \(declared): say what it is on PostgreSQL") }
                // PostgreSQL's primary keys are NOT NULL; SQLite's other than INTEGER ones of rowid
                // tables take NULL unless declared NOT NULL (a quirk it keeps for compatibility).
                shape.columns[key, default: [:]][columnName.lowercased()] = Column(
                    type: type ?? declared, notNull: try column.get("notnull", as: Bool.self) || primaryKey > 0,
                    defaultValue: try column.get("dflt_value", as: String?.self).map(normalizedDefault),
                    identity: autoincrement && primaryKey > 0)
            }
            primaryKeys[key] = keyColumns.sorted { $0.0 < $1.0 }.map(\.1)
            shape.checks[key] = sql.matches(of: #/(?i)\bCHECK\s*\(/#).count + booleans

            let indexList = try db.fetchAll("SELECT name, \"unique\", origin FROM pragma_index_list(?)", name)
            if !indexList.contains(where: { (try? $0.get("origin", as: String.self)) == "pk" }), let keys = primaryKeys[key], !keys.isEmpty {
                // An INTEGER PRIMARY KEY is the rowid: no index of its own is listed.
                shape.indexes.append(Index(table: key, keys: keys, unique: true, predicate: nil))
            }
            for index in indexList {
                let indexName: String = try index.get("name")
                var keys: [String] = []
                for column in try db.fetchAll("SELECT cid, name, \"desc\", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", indexName) {
                    guard let columnName = try column.get("name", as: String?.self) else {
                        shape.problems.append("index \(indexName) has an expression: teach this test to read it")
                        continue
                    }
                    let nocase = try column.get("coll", as: String.self).uppercased() == "NOCASE"
                    keys.append((nocase ? "lower(\(columnName))" : columnName).lowercased() + (try column.get("desc", as: Bool.self) ? " DESC" : ""))
                }
                // A partial index's WHERE is only in its CREATE INDEX statement.
                let definition = try db.fetchValue(String.self, "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", indexName) ?? ""
                let predicate = definition.range(of: " WHERE ", options: .caseInsensitive).map { String(definition[$0.upperBound...]) }
                shape.indexes.append(Index(table: key, keys: keys, unique: try index.get("unique", as: Bool.self),
                                           predicate: predicate.map(normalizedPredicate)))
                if try index.get("origin", as: String.self) == "c" { shape.indexNames.insert(indexName.lowercased()) }
            }
        }
        for table in tables {
            let name: String = try table.get("name")
            var keys: [Int: ForeignKey] = [:]
            for row in try db.fetchAll("SELECT id, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq", name) {
                let id: Int = try row.get("id")
                let parent = try row.get("table", as: String.self).lowercased()
                let onDelete: String = try row.get("on_delete")
                var key = keys[id] ?? ForeignKey(table: name.lowercased(), columns: [], parent: parent, parentColumns: [], onDelete: onDelete)
                key.columns.append(try row.get("from", as: String.self).lowercased())
                if let to = try row.get("to", as: String?.self) { key.parentColumns.append(to.lowercased()) }
                keys[id] = key
            }
            for var key in keys.values {
                // A reference without columns is to the parent's primary key.
                if key.parentColumns.isEmpty { key.parentColumns = primaryKeys[key.parent] ?? [] }
                shape.foreignKeys.append(key)
            }
        }
        for row in try db.fetchAll("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'", [SQLValue]()) {
            let sql: String = try row.get("sql")
            guard let event = sql.firstMatch(of: #/(?i)\b(BEFORE|AFTER|INSTEAD OF)\s+(INSERT|UPDATE|DELETE)\b/#) else {
                shape.problems.append("trigger \(try row.get("name", as: String.self)): no timing and event in \(sql)")
                continue
            }
            shape.triggers.insert("\(try row.get("name", as: String.self).lowercased()) on \(try row.get("tbl_name", as: String.self).lowercased()): \(event.1.uppercased()) \(event.2.uppercased())")
        }
        return shape
    }

    // MARK: Normalizing

    /// `'x'::text` → `'x'`; numbers as they are.
    static func normalizedDefault(_ text: String) -> String {
        text.replacing(#/::[a-z ]+$/#, with: "")
    }

    /// Lower case, no parentheses, single spaces: `(clearedat IS NULL)` and `clearedAt IS NULL` agree.
    static func normalizedPredicate(_ text: String) -> String {
        text.lowercased().filter { $0 != "(" && $0 != ")" }.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
