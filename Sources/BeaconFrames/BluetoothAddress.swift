/// A 48-bit Bluetooth device address (BD_ADDR), most-significant byte first.
///
/// Written as six upper-case hex pairs separated by colons (`C0:FF:EE:00:00:01`), the form used in
/// traces, events and by BlueZ. On the air and in HCI events the bytes travel little-endian;
/// ``init(littleEndian:)`` takes them in that order.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The six bytes, most-significant first.
    public let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8) {
        bytes = (b0, b1, b2, b3, b4, b5)
    }

    /// Takes six bytes in air order (least-significant first), as HCI events and btsnoop carry them.
    /// Returns nil unless `bytes` has exactly six elements.
    public init?<C: Collection>(littleEndian bytes: C) where C.Element == UInt8 {
        guard bytes.count == 6 else { return nil }
        let b = Array(bytes)
        self.init(b[5], b[4], b[3], b[2], b[1], b[0])
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case; `-` also accepted as separator).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var values: [UInt8] = []
        for part in parts {
            guard part.count == 2, let value = UInt8(part, radix: 16) else { return nil }
            values.append(value)
        }
        self.init(values[0], values[1], values[2], values[3], values[4], values[5])
    }

    /// The bytes as an array, most-significant first.
    public var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5] }

    /// The bytes in air order (least-significant first).
    public var littleEndianBytes: [UInt8] { array.reversed() }

    public var description: String {
        array.map { hexByte($0) }.joined(separator: ":")
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.array == rhs.array }
    public func hash(into hasher: inout Hasher) { hasher.combine(array) }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.array.lexicographicallyPrecedes(rhs.array) }
}

/// Whether an address is the controller's public (IEEE-assigned) one or a random one.
public enum AddressType: String, Sendable, Hashable, Codable {
    case `public`
    case random

    /// The Core specification's address-type code (0 public, 1 random; 2 and 3, the resolved
    /// identity addresses, map to the same two kinds). Nil for any other code.
    public init?(coreCode: UInt8) {
        switch coreCode {
        case 0, 2: self = .public
        case 1, 3: self = .random
        default: return nil
        }
    }
}

@inline(__always)
func hexByte(_ value: UInt8) -> String {
    let digits: [Character] = Array("0123456789ABCDEF")
    return String([digits[Int(value >> 4)], digits[Int(value & 0x0F)]])
}
