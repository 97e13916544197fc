import Foundation

/// A 48-bit Bluetooth device address (BD_ADDR), most-significant byte first.
///
/// Written as six upper-case hex pairs separated by colons (`C0:FF:EE:00:00:01`), the form used in
/// traces, events and by BlueZ. On the air and in HCI events the bytes travel little-endian;
/// ``init(littleEndian:)`` takes them in that order.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48 bits, most-significant byte highest.
    public let value: UInt64

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8) {
        value = [b0, b1, b2, b3, b4, b5].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Takes six bytes in air order (least-significant first), as HCI events and btsnoop carry them.
    /// Returns nil unless `bytes` has exactly six elements.
    public init?<C: Collection>(littleEndian bytes: C) where C.Element == UInt8 {
        guard bytes.count == 6 else { return nil }
        let b = Array(bytes)
        self.init(b[5], b[4], b[3], b[2], b[1], b[0])
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case; `-` also accepted as separator, but one kind only).
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 17 else { return nil }
        let separator: Character = text.contains("-") ? "-" : ":"
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var values: [UInt8] = []
        for part in parts {
            guard part.count == 2, let value = UInt8(part, radix: 16) else { return nil }
            values.append(value)
        }
        self.init(values[0], values[1], values[2], values[3], values[4], values[5])
    }

    /// The bytes as an array, most-significant first.
    public var array: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) } }

    /// The bytes in air order (least-significant first).
    public var littleEndianBytes: [UInt8] { array.reversed() }

    public var description: String {
        array.map { hexByte($0) }.joined(separator: ":")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
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

private let upperHexPairs: [String] = (0...255).map { String(format: "%02X", $0) }

/// Two upper-case hex digits.
@inline(__always)
func hexByte(_ value: UInt8) -> String { upperHexPairs[Int(value)] }
