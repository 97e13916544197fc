/// A bounds-checked cursor over bytes: every read either succeeds or throws a ``FrameError``
/// naming the field and its offset. Never traps.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    /// Offset of the next byte to read, relative to the start of `bytes`.
    public private(set) var offset: Int
    /// Added to offsets in errors, when `bytes` is a piece of a larger input.
    public let baseOffset: Int

    public init(_ bytes: [UInt8], baseOffset: Int = 0) {
        self.bytes = bytes
        self.offset = 0
        self.baseOffset = baseOffset
    }

    /// Reads `bytes` from `start` on, without copying them; offsets in errors count from the
    /// start of `bytes`.
    public init(_ bytes: [UInt8], startingAt start: Int) {
        self.bytes = bytes
        self.offset = max(0, min(start, bytes.count))
        self.baseOffset = 0
    }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset >= bytes.count }

    public mutating func require(_ count: Int, for what: String) throws(FrameError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(what: what, offset: baseOffset + offset, needed: count, available: max(remaining, 0))
        }
    }

    public mutating func uint8(_ what: String) throws(FrameError) -> UInt8 {
        try require(1, for: what)
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func int8(_ what: String) throws(FrameError) -> Int8 {
        Int8(bitPattern: try uint8(what))
    }

    public mutating func uint16LE(_ what: String) throws(FrameError) -> UInt16 {
        try require(2, for: what)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    public mutating func uint16BE(_ what: String) throws(FrameError) -> UInt16 {
        try require(2, for: what)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func uint32BE(_ what: String) throws(FrameError) -> UInt32 {
        try require(4, for: what)
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    public mutating func uint32LE(_ what: String) throws(FrameError) -> UInt32 {
        try require(4, for: what)
        var value: UInt32 = 0
        for i in (0..<4).reversed() { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    public mutating func uint64BE(_ what: String) throws(FrameError) -> UInt64 {
        try require(8, for: what)
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return value
    }

    public mutating func read(_ count: Int, _ what: String) throws(FrameError) -> [UInt8] {
        try require(count, for: what)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A Bluetooth address as HCI carries it: six bytes, least significant first. Reads them in
    /// place (no array), for the per-report path.
    public mutating func address(_ what: String) throws(FrameError) -> BluetoothAddress {
        try require(6, for: what)
        defer { offset += 6 }
        return BluetoothAddress(bytes[offset + 5], bytes[offset + 4], bytes[offset + 3],
                                bytes[offset + 2], bytes[offset + 1], bytes[offset])
    }

    public mutating func skip(_ count: Int, _ what: String) throws(FrameError) {
        try require(count, for: what)
        offset += count
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }

    /// The absolute offset of the next byte, for error messages.
    public var absoluteOffset: Int { baseOffset + offset }
}
