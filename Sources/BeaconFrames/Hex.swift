/// Hexadecimal text ⇄ bytes.
public enum Hex {
    /// Lower-case hex, no separators.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.append(lowerDigits[Int(byte >> 4)])
            text.append(lowerDigits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Parses hex digits, ignoring spaces, colons, dashes and underscores between bytes and an
    /// optional `0x` prefix. Throws with the UTF-8 byte offset (after the prefix) of the first bad digit.
    public static func decode(_ text: some StringProtocol) throws(HexError) -> [UInt8] {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(body.utf8.count / 2)
        var high: UInt8?
        for (offset, unit) in body.utf8.enumerated() {
            if unit == 0x20 || unit == 0x3A || unit == 0x2D || unit == 0x5F || unit == 0x09 {
                guard high == nil else { throw HexError(offset: offset, reason: "a separator splits a byte in two") }
                continue
            }
            guard let nibble = nibbleValue(unit) else {
                let shown = unit < 0x80 ? "'\(Character(Unicode.Scalar(unit)))'" : "byte 0x" + hexByte(unit)
                throw HexError(offset: offset, reason: "\(shown) is not a hex digit")
            }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard high == nil else { throw HexError(offset: body.utf8.count, reason: "odd number of hex digits") }
        return bytes
    }

    private static let lowerDigits: [Character] = Array("0123456789abcdef")

    @inline(__always)
    static func nibbleValue(_ unit: UInt8) -> UInt8? {
        switch unit {
        case 0x30...0x39: unit - 0x30
        case 0x41...0x46: unit - 0x41 + 10
        case 0x61...0x66: unit - 0x61 + 10
        default: nil
        }
    }
}

/// Text that is not valid hex.
public struct HexError: Error, Equatable, CustomStringConvertible {
    /// UTF-8 byte offset into the text (after any `0x` prefix).
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid hex at byte \(offset): \(reason)" }
}
