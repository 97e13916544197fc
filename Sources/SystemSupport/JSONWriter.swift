import Foundation

/// A value that writes itself as JSON directly through a ``JSONWriter``.
///
/// The lobby's hot answers (profiles, invitations, games, event payloads) conform, and write
/// byte for byte what `JSONEncoder` with `.sortedKeys` and ISO 8601 dates with milliseconds
/// produces, at a fraction of its cost; its tests compare the two on every type that conforms.
public protocol JSONWritable {
    /// Writes this value; where the output must match `.sortedKeys`, keys come in byte order.
    func write(to json: inout JSONWriter)
}

/// Appends JSON to a byte buffer, members in the order they are written.
///
/// Nearplay's formats fix their key order (trace and event lines, the agent's events, the lobby's
/// answers), which `JSONEncoder` on Linux does not keep, and some fix a number's decimals too; this
/// is the one writer for all of them. Objects are written member by member with `key(_:)`, which
/// places the commas; optional members that are nil are left out, as `encodeIfPresent` does.
public struct JSONWriter {
    /// How strings are escaped.
    public enum Escaping: Sendable {
        /// As `JSONEncoder` does: `/` as `\/`, backspace and form feed as `\b` and `\f`. The
        /// lobby's answers, which must equal what `JSONEncoder` writes.
        case likeJSONEncoder
        /// Only what JSON requires (quote, backslash, control characters as `\n`, `\r`, `\t` or
        /// `\u00XX`): trace lines, event lines and the agent's output.
        case minimal
    }

    @usableFromInline var storage: [UInt8] = []
    @usableFromInline var needsComma = false
    @usableFromInline let escapesSlashes: Bool

    /// The JSON written so far.
    public var bytes: [UInt8] { storage }

    /// The JSON written so far, as text.
    public var text: String { String(decoding: storage, as: UTF8.self) }

    public init(capacity: Int = 256, escaping: Escaping = .likeJSONEncoder) {
        storage.reserveCapacity(capacity)
        escapesSlashes = escaping == .likeJSONEncoder
    }

    /// Writes `value` alone and returns the bytes.
    public static func encode(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    @inlinable
    public mutating func object(_ members: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        storage.append(UInt8(ascii: "{"))
        needsComma = false
        try members(&self)
        storage.append(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable
    public mutating func array<S: Sequence>(_ elements: S, _ element: (inout JSONWriter, S.Element) throws -> Void) rethrows {
        separate()
        storage.append(UInt8(ascii: "["))
        needsComma = false
        for value in elements { try element(&self, value) }
        storage.append(UInt8(ascii: "]"))
        needsComma = true
    }

    public mutating func array<S: Sequence>(_ elements: S) where S.Element: JSONWritable {
        array(elements) { json, value in value.write(to: &json) }
    }

    /// Starts an object member; the value written next belongs to it.
    @inlinable
    public mutating func key(_ name: StaticString) {
        separate()
        storage.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { storage.append(contentsOf: $0) }
        storage.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    /// Starts an object member whose name is only known at run time (escaped as strings are).
    public mutating func key(_ name: String) {
        string(name)
        storage.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func member(_ name: StaticString, _ value: String) { key(name); string(value) }
    public mutating func member(_ name: StaticString, _ value: Int64) { key(name); integer(value) }
    public mutating func member(_ name: StaticString, _ value: Int) { key(name); integer(Int64(value)) }
    public mutating func member(_ name: StaticString, _ value: Bool) { key(name); boolean(value) }
    public mutating func member(_ name: StaticString, _ value: Double) { key(name); double(value) }
    public mutating func member(_ name: StaticString, _ value: Date) { key(name); date(value) }
    public mutating func member(_ name: StaticString, _ value: some JSONWritable) { key(name); value.write(to: &self) }
    public mutating func member<R: RawRepresentable<String>>(_ name: StaticString, _ value: R) { key(name); string(value.rawValue) }

    public mutating func member(_ name: StaticString, _ value: String?) { if let value { member(name, value) } }
    public mutating func member(_ name: StaticString, _ value: Int64?) { if let value { member(name, value) } }
    public mutating func member(_ name: StaticString, _ value: Int?) { if let value { member(name, value) } }
    public mutating func member(_ name: StaticString, _ value: Bool?) { if let value { member(name, value) } }
    public mutating func member(_ name: StaticString, _ value: Date?) { if let value { member(name, value) } }
    public mutating func member(_ name: StaticString, _ value: Double?) { if let value { member(name, value) } }
    public mutating func member<R: RawRepresentable<String>>(_ name: StaticString, _ value: R?) {
        if let value { member(name, value) }
    }

    /// A `[String: Int]` as an object with its keys in byte order.
    public mutating func member(_ name: StaticString, _ value: [String: Int]) {
        key(name)
        object { json in
            for (key, number) in value.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                json.key(key)
                json.integer(Int64(number))
            }
        }
    }

    public mutating func member(_ name: StaticString, _ value: [String: Int]?) { if let value { member(name, value) } }

    @inlinable
    public mutating func string(_ value: String) {
        separate()
        storage.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "/") where escapesSlashes: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
            case 0x08 where escapesSlashes: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C where escapesSlashes: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                storage.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                storage.append(Self.hexDigit(byte >> 4))
                storage.append(Self.hexDigit(byte & 0xF))
            default: storage.append(byte)
            }
        }
        storage.append(UInt8(ascii: "\""))
        needsComma = true
    }

    @inlinable
    public mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { storage.append(UInt8(ascii: "-")) }
        let start = storage.count
        var rest = value.magnitude
        repeat {
            storage.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        storage[start...].reverse()
        needsComma = true
    }

    public mutating func boolean(_ value: Bool) {
        separate()
        storage.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
        needsComma = true
    }

    public mutating func null() {
        separate()
        storage.append(contentsOf: Array("null".utf8))
        needsComma = true
    }

    /// As `JSONEncoder` writes doubles: integral values without ".0", exponents as "1e+21".
    public mutating func double(_ value: Double) {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        raw(text)
    }

    /// `value` with `places` decimals (`2.50`, where `double` would write `2.5`), never `-0`;
    /// `null` when it is not finite. Trace and event lines fix their decimals this way.
    public mutating func fixed(_ value: Double, places: Int) {
        guard value.isFinite else { return null() }
        let text = String(format: "%.\(places)f", value)
        raw(text == "-0" || text.hasPrefix("-0.") && Double(text) == 0 ? String(text.dropFirst()) : text)
    }

    /// The shortest text that reads back as the same `Double`, integral values with one decimal
    /// (`3.0`); `null` when it is not finite. Trace headers and `truth_m` are written this way.
    public mutating func shortest(_ value: Double) {
        guard value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 1e15 { return raw(String(format: "%.1f", value)) }
        raw("\(value)")
    }

    /// Writes `json`, which must already be one JSON value, as it is.
    public mutating func raw(_ json: String) {
        separate()
        storage.append(contentsOf: json.utf8)
        needsComma = true
    }

    /// ISO 8601 in UTC with milliseconds, truncated: `2026-11-22T05:40:04.123Z`.
    public mutating func date(_ value: Date) {
        separate()
        let interval = value.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        var milliseconds = Int(((interval - seconds) * 1000).rounded(.down))
        milliseconds = min(max(milliseconds, 0), 999)
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        storage.append(UInt8(ascii: "\""))
        digits(Int(parts.tm_year) + 1900, 4)
        storage.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        storage.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        storage.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        storage.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        storage.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        storage.append(UInt8(ascii: "."))
        digits(milliseconds, 3)
        storage.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
        needsComma = true
    }

    private mutating func digits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            storage.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    @inlinable
    mutating func separate() {
        if needsComma { storage.append(UInt8(ascii: ",")) }
    }

    @inlinable
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

extension JSONWriter {
    /// Writes `value` through its `encode(to:)`, object members in the order it encodes them
    /// (the agent's event lines promise the order their README documents, which `JSONEncoder`
    /// on Linux does not keep). Integers as they are, doubles as ``shortest(_:)`` writes them,
    /// ``JSONFixedNumber`` with its places.
    public mutating func encodable(_ value: some Encodable) throws {
        try JSONNode.of(value, codingPath: []).write(to: &self)
    }
}
