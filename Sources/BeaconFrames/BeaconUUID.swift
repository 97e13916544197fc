/// A 128-bit identifier in network (big-endian) byte order: an iBeacon proximity UUID, an
/// AltBeacon ID1, or an Eddystone namespace and instance taken together.
///
/// Held as two 64-bit words so hashing and comparing are cheap on the per-advertisement path.
public struct BeaconUUID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Takes exactly 16 bytes, big-endian; nil for any other count.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// Parses `E2C56DB5-DFFB-48D2-B060-D0F5A71096E0` (either case, dashes optional).
    public init?(_ text: some StringProtocol) {
        let digits = text.utf8.filter { $0 != 0x2D }
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < 32 {
            guard let h = Hex.nibbleValue(digits[index]), let l = Hex.nibbleValue(digits[index + 1]) else { return nil }
            bytes.append(h << 4 | l)
            index += 2
        }
        self.init(bytes: bytes)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// Upper-case 8-4-4-4-12 form.
    public var description: String {
        let hex = bytes.map(hexByte).joined()
        let chars = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
