import Foundation

/// One value going into or coming out of a statement, in the types both engines share. SQLite has
/// exactly these five storage classes; on PostgreSQL the lobby's schema uses `BIGINT`, `DOUBLE
/// PRECISION`, `TEXT` and `BYTEA` for them (booleans are stored as 0 and 1, as SQLite does), so a
/// statement and its results mean the same on both.
public enum SQLValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): "x'" + bytes.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    public var isNull: Bool { if case .null = self { true } else { false } }
}

/// A Swift type stored in one column.
public protocol SQLValueConvertible: Sendable {
    var sqlValue: SQLValue { get }
    /// The value `sqlValue` holds, or nil when it holds another type (NULL included).
    init?(sqlValue: SQLValue)
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
    public init?(sqlValue: SQLValue) { self = sqlValue }
}

extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self) }
    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let value): self = value
        // An aggregate (SUM over BIGINT is NUMERIC on PostgreSQL) may come back as a real.
        case .real(let value) where value.rounded() == value && abs(value) < 9.2e18: self = Int64(value)
        default: return nil
        }
    }
}

extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard let value = Int64(sqlValue: sqlValue) else { return nil }
        self = Int(value)
    }
}

extension Double: SQLValueConvertible {
    public var sqlValue: SQLValue { .real(self) }
    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public init?(sqlValue: SQLValue) {
        guard let value = Int64(sqlValue: sqlValue) else { return nil }
        self = value != 0
    }
}

extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
    public init?(sqlValue: SQLValue) {
        guard case .text(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Data: SQLValueConvertible {
    public var sqlValue: SQLValue { .blob(Array(self)) }
    public init?(sqlValue: SQLValue) {
        guard case .blob(let bytes) = sqlValue else { return nil }
        self = Data(bytes)
    }
}

extension Date: SQLValueConvertible {
    /// Seconds since 1970 as a real, the lobby's representation of a time on both engines.
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
    public init?(sqlValue: SQLValue) {
        guard let seconds = Double(sqlValue: sqlValue) else { return nil }
        self = Date(timeIntervalSince1970: seconds)
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public init?(sqlValue: SQLValue) {
        if sqlValue.isNull {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// A string- or integer-backed enum stores its raw value.
extension SQLValueConvertible where Self: RawRepresentable, RawValue: SQLValueConvertible {
    public var sqlValue: SQLValue { rawValue.sqlValue }
    public init?(sqlValue: SQLValue) {
        guard let raw = RawValue(sqlValue: sqlValue) else { return nil }
        self.init(rawValue: raw)
    }
}

/// One result row: its column names and values, in the statement's order.
public struct SQLRow: Sendable, Hashable {
    public let columns: [String]
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of column `name` (names compare without regard to case, as both engines do for
    /// unquoted names); `.null` when the row has no such column.
    public subscript(_ name: String) -> SQLValue {
        if let index = columns.firstIndex(of: name) ?? columns.firstIndex(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
            return values[index]
        }
        return .null
    }

    public subscript(_ index: Int) -> SQLValue { values.indices.contains(index) ? values[index] : .null }

    /// Column `name` as a `T`; throws naming the column and what it held when it is not one.
    public func get<T: SQLValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard columns.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) else {
            throw SQLError.noSuchColumn(name, columns: columns)
        }
        guard let value = T(sqlValue: self[name]) else { throw SQLError.wrongType(column: name, value: self[name], wanted: "\(T.self)") }
        return value
    }

    /// Column `index` as a `T`.
    public func get<T: SQLValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard let value = T(sqlValue: self[index]) else { throw SQLError.wrongType(column: "#\(index)", value: self[index], wanted: "\(T.self)") }
        return value
    }
}
