import Foundation

/// A value that writes itself as JSON directly, byte for byte what `JSONEncoder` with
/// `.sortedKeys` and ISO 8601 dates with milliseconds produces, at a fraction of its cost.
/// The lobby's hot answers (profiles, invitations, games, event payloads) use it; `JSONEncoder`
/// stays for everything else. Tests compare the two on every type that conforms.
public protocol JSONWritable {
    /// Writes this value; keys must come in byte order, as `.sortedKeys` puts them.
    func write(to json: inout JSONWriter)
}

/// Appends JSON to a byte buffer. Objects are written member by member with `key(_:)`, which
/// places the commas; optional members that are nil are left out, as `encodeIfPresent` does.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Writes `value` alone and returns the bytes.
    public static func encode(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    public mutating func object(_ members: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        members(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func array<S: Sequence>(_ elements: S, _ element: (inout JSONWriter, S.Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for value in elements { element(&self, value) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    public mutating func array<S: Sequence>(_ elements: S) where S.Element: JSONWritable {
        array(elements) { json, value in value.write(to: &json) }
    }

    /// Starts an object member; the value written next belongs to it.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
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
                json.string(key)
                json.bytes.append(UInt8(ascii: ":"))
                json.needsComma = false
                json.integer(Int64(number))
            }
        }
    }

    public mutating func member(_ name: StaticString, _ value: [String: Int]?) { if let value { member(name, value) } }

    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "/"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
        needsComma = true
    }

    public mutating func boolean(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
        needsComma = true
    }

    /// As `JSONEncoder` writes doubles: integral values without ".0", exponents as "1e+21".
    public mutating func double(_ value: Double) {
        separate()
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: Array(text.utf8))
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
        bytes.append(UInt8(ascii: "\""))
        digits(Int(parts.tm_year) + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        bytes.append(UInt8(ascii: "."))
        digits(milliseconds, 3)
        bytes.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
        needsComma = true
    }

    private mutating func digits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
