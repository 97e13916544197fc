import LobbyDatabase

/// A row type of the lobby's schema, read and written through ``SQLSession`` on either engine.
/// `columns` lists the table's columns in its definition's order, which ``init(sqlRow:)`` reads and
/// ``sqlValues`` writes; select exactly these (or `*`) when fetching one.
protocol SQLRecord {
    static var databaseTableName: String { get }
    static var columns: String { get }
    init(sqlRow: SQLRow) throws
    /// The values of ``columns``, in that order.
    var sqlValues: [SQLValue] { get }
}

extension SQLRecord {
    static func fetchOne(_ db: any SQLSession, _ sql: String, _ arguments: any SQLValueConvertible...) throws -> Self? {
        try db.fetchOne(sql, arguments.map(\.sqlValue)).map(Self.init(sqlRow:))
    }

    static func fetchAll(_ db: any SQLSession, _ sql: String, _ arguments: any SQLValueConvertible...) throws -> [Self] {
        try db.fetchAll(sql, arguments.map(\.sqlValue)).map(Self.init(sqlRow:))
    }

    /// Inserts the row with every column given. With `ignoringConflicts`, a row that would break a
    /// unique key is left out instead (`ON CONFLICT DO NOTHING`, which both engines understand);
    /// answers whether the row went in.
    @discardableResult
    func insert(_ db: any SQLSession, ignoringConflicts: Bool = false) throws -> Bool {
        let values = sqlValues
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        let sql = "INSERT INTO \(Self.databaseTableName) (\(Self.columns)) VALUES (\(marks))"
            + (ignoringConflicts ? " ON CONFLICT DO NOTHING" : "")
        return try db.execute(sql, values) > 0
    }
}

/// A record whose table numbers its rows (`id`): inserting one lets the database choose the id.
protocol SQLRecordWithID: SQLRecord {
    var id: Int64? { get set }
}

extension SQLRecordWithID {
    /// Inserts the row without its id, which the database chooses, and keeps that id.
    mutating func insertNumbered(_ db: any SQLSession) throws {
        var values = sqlValues
        var columns = Self.columns.components(separatedBy: ", ")
        guard columns.first == "id" else { preconditionFailure("\(Self.self).columns must start with id") }
        values.removeFirst()
        columns.removeFirst()
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        let sql = "INSERT INTO \(Self.databaseTableName) (\(columns.joined(separator: ", "))) VALUES (\(marks)) RETURNING id"
        guard let id = try db.fetchValue(Int64.self, sql, values) else {
            throw SQLError.connection("the database inserted into \(Self.databaseTableName) without answering the new row's id")
        }
        self.id = id
    }
}
