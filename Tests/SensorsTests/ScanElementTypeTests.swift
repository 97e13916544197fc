import struct BeaconFrames.SplitMix64
import Testing
@testable import Sensors

/// Encodes `value` the way a driver would store it, for comparison with the decoder.
func encode(_ value: Int64, as type: ScanElementType, lowBits: UInt64 = 0) -> [UInt8] {
    let mask: UInt64 = type.realBits == 64 ? .max : (1 << UInt64(type.realBits)) - 1
    let shiftMask: UInt64 = type.shift == 0 ? 0 : (1 << UInt64(type.shift)) - 1
    var word = (UInt64(bitPattern: value) & mask) << UInt64(type.shift) | (lowBits & shiftMask)
    var bytes: [UInt8] = []
    for _ in 0..<type.storageBytes {
        bytes.append(UInt8(word & 0xFF))
        word >>= 8
    }
    return type.isBigEndian ? bytes.reversed() : bytes
}

func decode(_ bytes: [UInt8], as type: ScanElementType) -> Int64 {
    bytes.withUnsafeBytes { type.decode($0, at: 0) }
}

struct ScanElementTypeTests {
    @Test func parsesTwelveBitsShiftedInLittleEndianWord() throws {
        let type = try ScanElementType(parsing: "le:s12/16>>4\n")
        #expect(try type == ScanElementType(isBigEndian: false, isSigned: true, realBits: 12, storageBits: 16, shift: 4))
    }

    @Test func parsesUnsignedBigEndianAndRepeat() throws {
        #expect(try ScanElementType(parsing: "be:u16/16>>0")
            == (try ScanElementType(isBigEndian: true, isSigned: false, realBits: 16, storageBits: 16)))
        let repeated = try ScanElementType(parsing: "be:s16/16X3>>0")
        #expect(repeated.repeatCount == 3)
        #expect(repeated.elementBytes == 6)
    }

    @Test(arguments: [
        "", "le", "le:", "le:s", "le:s12", "le:s12/16", "le:s12/16>", "le:s12/16>>", "xe:s12/16>>4",
        "le:f12/16>>4", "le:s12/12>>0", "le:s0/16>>0", "le:s17/16>>0", "le:s12/16>>5", "le:s12/16>>4 ",
        "le:s12/16X0>>4", "le:s12/16X>>4", "le:s99999/16>>0", "le:s-1/16>>0", "LE:s12/16>>4", "le:s12/16>>4\n\n",
        "le:s8/8X2000>>0", "le:s64/128>>0",
    ])
    func refusesMalformedText(_ text: String) {
        #expect(throws: ScanElementType.ParseError.self) { try ScanElementType(parsing: text) }
    }

    @Test func describesItselfInTheKernelSpelling() throws {
        for text in ["le:s12/16>>4", "be:u16/16>>0", "le:s64/64>>0", "be:s16/16X4>>0", "le:u8/8>>0"] {
            #expect(try ScanElementType(parsing: text).description == text)
        }
    }

    /// Every 12-bit value, in both endiannesses, with noise in the 4 bits below it.
    @Test func decodesEveryTwelveBitValue() throws {
        for isBigEndian in [false, true] {
            let type = try ScanElementType(isBigEndian: isBigEndian, isSigned: true, realBits: 12, storageBits: 16, shift: 4)
            for value in Int64(-2048)...2047 {
                #expect(decode(encode(value, as: type, lowBits: UInt64(value & 0xF)), as: type) == value)
            }
        }
    }

    /// Every 16-bit pattern, signed and unsigned, both endiannesses.
    @Test func decodesEverySixteenBitValue() throws {
        for isBigEndian in [false, true] {
            let signed = try ScanElementType(isBigEndian: isBigEndian, isSigned: true, realBits: 16, storageBits: 16)
            let unsigned = try ScanElementType(isBigEndian: isBigEndian, isSigned: false, realBits: 16, storageBits: 16)
            for pattern in 0...0xFFFF {
                let bytes = isBigEndian ? [UInt8(pattern >> 8), UInt8(pattern & 0xFF)] : [UInt8(pattern & 0xFF), UInt8(pattern >> 8)]
                if decode(bytes, as: signed) != Int64(Int16(bitPattern: UInt16(pattern))) { Issue.record("signed \(pattern)"); return }
                if decode(bytes, as: unsigned) != Int64(pattern) { Issue.record("unsigned \(pattern)"); return }
            }
        }
    }

    /// Every legal combination of storage, width, shift, sign and endianness, at the extremes
    /// and at random values.
    @Test func decodesEveryLegalLayout() throws {
        var generator = SplitMix64(seed: 7)
        var checked = 0
        for storage in [8, 16, 32, 64] {
            for bits in 1...storage {
                for shift in 0...(storage - bits) {
                    for isSigned in [false, true] {
                        for isBigEndian in [false, true] {
                            let type = try ScanElementType(isBigEndian: isBigEndian, isSigned: isSigned, realBits: bits, storageBits: storage, shift: shift)
                            let low: Int64 = isSigned ? (bits == 64 ? .min : -(1 << Int64(bits - 1))) : 0
                            let high: Int64 = isSigned ? (bits == 64 ? .max : (1 << Int64(bits - 1)) - 1)
                                : (bits >= 63 ? .max : (1 << Int64(bits)) - 1)
                            var values = [low, high, 0, min(high, 1)]
                            for _ in 0..<3 { values.append(Int64.random(in: low...high, using: &generator)) }
                            for value in values {
                                let got = decode(encode(value, as: type, lowBits: generator.next()), as: type)
                                if got != value {
                                    Issue.record("\(type): \(value) decoded as \(got)")
                                    return
                                }
                                checked += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(checked > 30_000)
    }

    @Test func refusesIllegalWidthsBuiltInCode() {
        for (bits, storage, shift, repeatCount) in [(12, 12, 0, 1), (17, 16, 0, 1), (8, 16, 9, 1), (0, 8, 0, 1), (8, 8, 0, 0), (8, 128, 0, 1), (8, 8, -1, 1)] {
            #expect(throws: ScanElementType.ParseError.self) {
                try ScanElementType(isBigEndian: false, isSigned: true, realBits: bits, storageBits: storage, repeatCount: repeatCount, shift: shift)
            }
        }
    }

    /// Random text over the grammar's alphabet never traps; what parses prints back the same.
    @Test func fuzzedTextNeverTraps() {
        var generator = SplitMix64(seed: 42)
        let alphabet = Array("lebsuX:/>0123456789 \n-+xé")
        var parsed = 0
        for round in 0..<60_000 {
            var text = ""
            if round % 4 == 1 {
                // Well formed, with random widths and shifts: some legal, most not.
                let endian = ["le", "be"].randomElement(using: &generator)!
                let sign = ["s", "u"].randomElement(using: &generator)!
                let repeats = Bool.random(using: &generator) ? "X\(Int.random(in: 0...4, using: &generator))" : ""
                text = "\(endian):\(sign)\(Int.random(in: 0...70, using: &generator))/\([8, 16, 24, 32, 64, 12].randomElement(using: &generator)!)\(repeats)>>\(Int.random(in: 0...20, using: &generator))"
            } else {
                if round % 2 == 0 {
                    text = ["le:", "be:", "le", ""].randomElement(using: &generator)! + ["s", "u", ""].randomElement(using: &generator)!
                }
                for _ in 0..<Int.random(in: 0...14, using: &generator) {
                    text.append(alphabet.randomElement(using: &generator)!)
                }
            }
            if let type = try? ScanElementType(parsing: text) {
                parsed += 1
                #expect((try? ScanElementType(parsing: type.description)) == type)
            }
        }
        // The seed is fixed, so this is exact: a change means the parser accepts other texts.
        #expect(parsed == 2642, "the fixed seed parses a known number of texts")
    }

    /// Random bytes through random layouts never trap, and every scan is decoded.
    @Test func fuzzedBytesNeverTrap() throws {
        var generator = SplitMix64(seed: 99)
        let types = ["le:s12/16>>4", "be:u16/16>>0", "le:s64/64>>0", "be:s24/32>>8", "le:u8/8>>0", "be:s16/16X3>>0", "le:s1/8>>7"]
        for _ in 0..<2_000 {
            var channels: [ScanChannel] = []
            for index in 0..<Int.random(in: 1...5, using: &generator) {
                let type = try ScanElementType(parsing: types.randomElement(using: &generator)!)
                channels.append(ScanChannel(name: "in_c\(index)", index: index * 2, type: type))
            }
            let layout = try ScanLayout(channels: channels.shuffled(using: &generator))
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let scans = layout.decodeAll(bytes)
            #expect(scans.count == bytes.count / layout.scanBytes)
            bytes.withUnsafeBytes { buffer in
                _ = layout.rawValue(in: buffer, scanStart: Int.random(in: -5...210, using: &generator), position: Int.random(in: -1...6, using: &generator))
            }
        }
    }
}
