/// How one channel is stored in an IIO buffer scan, as the kernel describes it in
/// `scan_elements/<channel>_type`.
///
/// The text is `[be|le]:[s|u]BITS/STORAGE[XREPEAT]>>SHIFT`, e.g. `le:s12/16>>4` (a signed
/// 12-bit value in the top of a little-endian 16-bit word) or `be:u16/16X3>>0` (three big-endian
/// 16-bit values). See the kernel's Documentation/ABI/testing/sysfs-bus-iio, `in_*_type`.
public struct ScanElementType: Equatable, Hashable, Sendable {
    public let isBigEndian: Bool
    public let isSigned: Bool
    /// Bits that carry the value, 1...storageBits.
    public let realBits: Int
    /// Bits the value occupies in the scan: 8, 16, 32 or 64.
    public let storageBits: Int
    /// How many values of this layout follow each other (1 unless the text has `X`).
    public let repeatCount: Int
    /// Right shift applied to the stored word before masking to `realBits`.
    public let shift: Int

    /// Checks the widths as the parser does: a type that could read outside its storage is
    /// refused here, so ``decode(_:at:repeatIndex:)`` never needs to check.
    public init(isBigEndian: Bool, isSigned: Bool, realBits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) throws(ParseError) {
        self.isBigEndian = isBigEndian
        self.isSigned = isSigned
        self.realBits = realBits
        self.storageBits = storageBits
        self.repeatCount = repeatCount
        self.shift = shift
        try validate()
    }

    /// Bytes one value occupies.
    public var storageBytes: Int { storageBits / 8 }

    /// Bytes the whole element (all repeats) occupies in a scan.
    public var elementBytes: Int { storageBytes * repeatCount }

    /// Why a `_type` text was refused.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case syntax(expected: String, at: Int)
        case invalidWidth(String)

        public var description: String {
            switch self {
            case .syntax(let expected, let offset): "expected \(expected) at character \(offset)"
            case .invalidWidth(let reason): reason
            }
        }
    }

    /// Parses the kernel's text; a trailing newline is allowed. Never traps, whatever the text.
    public init(parsing text: String) throws(ParseError) {
        var scanner = TextScanner(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        let endian = scanner.word(while: { $0.isLetter })
        switch endian {
        case "le": isBigEndian = false
        case "be": isBigEndian = true
        default: throw .syntax(expected: "`le` or `be`", at: 0)
        }
        try scanner.expect(":")
        switch scanner.next() {
        case "s": isSigned = true
        case "u": isSigned = false
        default: throw .syntax(expected: "`s` or `u`", at: scanner.offset - 1)
        }
        realBits = try scanner.number()
        try scanner.expect("/")
        storageBits = try scanner.number()
        if scanner.peek() == "X" {
            _ = scanner.next()
            repeatCount = try scanner.number()
        } else {
            repeatCount = 1
        }
        try scanner.expect(">>")
        shift = try scanner.number()
        guard scanner.isAtEnd else { throw .syntax(expected: "end of text", at: scanner.offset) }
        try validate()
    }

    private func validate() throws(ParseError) {
        guard [8, 16, 32, 64].contains(storageBits) else {
            throw .invalidWidth("storage of \(storageBits) bits is not 8, 16, 32 or 64")
        }
        guard realBits >= 1, realBits <= storageBits else {
            throw .invalidWidth("\(realBits) value bits do not fit in \(storageBits) storage bits")
        }
        guard shift >= 0, shift + realBits <= storageBits else {
            throw .invalidWidth("a shift of \(shift) pushes \(realBits) bits out of \(storageBits) storage bits")
        }
        guard repeatCount >= 1, repeatCount <= 1024 else {
            throw .invalidWidth("a repeat count of \(repeatCount) is outside 1...1024")
        }
    }

    /// Decodes value `repeatIndex` of this element starting at `offset` in `scan`.
    ///
    /// The caller guarantees `offset + elementBytes <= scan.count` (``ScanLayout`` does).
    @inline(__always)
    public func decode(_ scan: UnsafeRawBufferPointer, at offset: Int, repeatIndex: Int = 0) -> Int64 {
        let start = offset + repeatIndex * storageBytes
        var word: UInt64
        switch storageBits {
        case 8:
            word = UInt64(scan[start])
        case 16:
            let raw = scan.loadUnaligned(fromByteOffset: start, as: UInt16.self)
            word = UInt64(isBigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw))
        case 32:
            let raw = scan.loadUnaligned(fromByteOffset: start, as: UInt32.self)
            word = UInt64(isBigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
        default:
            let raw = scan.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            word = isBigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
        }
        word >>= UInt64(shift)
        if realBits < 64 {
            word &= (1 << UInt64(realBits)) &- 1
            if isSigned, word & (1 << UInt64(realBits - 1)) != 0 {
                word |= ~((1 << UInt64(realBits)) &- 1)
            }
        }
        return isSigned ? Int64(bitPattern: word) : Int64(clamping: word)
    }
}

extension ScanElementType: CustomStringConvertible {
    /// The kernel's spelling of this type.
    public var description: String {
        let repeatText = repeatCount > 1 ? "X\(repeatCount)" : ""
        return "\(isBigEndian ? "be" : "le"):\(isSigned ? "s" : "u")\(realBits)/\(storageBits)\(repeatText)>>\(shift)"
    }
}

/// A cursor over ASCII text for the small grammars of sysfs attributes.
struct TextScanner {
    private let characters: [Character]
    private(set) var offset = 0

    init(_ text: String) { characters = Array(text) }

    var isAtEnd: Bool { offset == characters.count }

    func peek() -> Character? { isAtEnd ? nil : characters[offset] }

    mutating func next() -> Character? {
        guard let character = peek() else { return nil }
        offset += 1
        return character
    }

    mutating func word(while predicate: (Character) -> Bool) -> String {
        var result = ""
        while let character = peek(), predicate(character) {
            result.append(character)
            offset += 1
        }
        return result
    }

    mutating func expect(_ literal: String) throws(ScanElementType.ParseError) {
        for character in literal {
            guard next() == character else { throw .syntax(expected: "`\(literal)`", at: offset - 1) }
        }
    }

    /// A decimal number of at most 4 digits (enough for any IIO width, and no overflow).
    mutating func number() throws(ScanElementType.ParseError) -> Int {
        let start = offset
        let digits = word(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 4, let value = Int(digits) else {
            throw .syntax(expected: "a number of 1 to 4 digits", at: start)
        }
        return value
    }
}
