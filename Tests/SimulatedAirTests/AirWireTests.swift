import BeaconFrames
@testable import Radio
import Testing

@Suite struct AirWireTests {
    static let messages: [AirMessage] = [
        .hello(version: 1, device: "alice"),
        .hello(version: 1, device: "bücher-ß"),
        .advertise(interval: 0.1, data: Fixtures.iBeacon(minor: 3).advertisingData(includeFlags: false)),
        .advertise(interval: 10.24, data: []),
        .rotate(interval: 0.1, data: Fixtures.iBeacon(minor: 4).advertisingData(includeFlags: false)),
        .rotate(interval: 0.02, data: []),
        .withdraw,
        .scan,
        .welcome(time: 12.5, address: SimulatedAir.address(of: "bob")),
        .refused("The simulated air hub does not know the device “carol”."),
        .rotated(time: 60.004, address: BluetoothAddress("3E:E5:E6:9C:5C:54")!),
        .advertisement(time: 3.25, address: BluetoothAddress("C0:FF:EE:00:00:01")!, rssi: -63,
                       data: Fixtures.iBeacon(minor: 1).advertisingData(includeFlags: false)),
        .advertisement(time: 0, address: BluetoothAddress("C0:FF:EE:00:00:02")!, rssi: -100, data: []),
    ]

    static func encoded(_ messages: [AirMessage]) -> [UInt8] {
        var bytes: [UInt8] = []
        for message in messages { message.encode(into: &bytes) }
        return bytes
    }

    static func decodeAll(_ decoder: inout AirFrameDecoder) throws(AirWireError) -> [AirMessage] {
        var messages: [AirMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    @Test func decodesWhatItEncodesHoweverTheBytesAreSplit() throws {
        let bytes = Self.encoded(Self.messages)
        for cut in 0...bytes.count {
            var decoder = AirFrameDecoder()
            decoder.append(Array(bytes[..<cut]))
            var messages = try Self.decodeAll(&decoder)
            decoder.append(Array(bytes[cut...]))
            messages += try Self.decodeAll(&decoder)
            #expect(messages == Self.messages, "cut at \(cut)")
            #expect(decoder.pending == 0)
        }
    }

    @Test func decodesByteByByte() throws {
        var decoder = AirFrameDecoder()
        var messages: [AirMessage] = []
        for byte in Self.encoded(Self.messages) {
            decoder.append([byte])
            messages += try Self.decodeAll(&decoder)
        }
        #expect(messages == Self.messages)
    }

    /// A rotate's body, byte for byte: the interval in microseconds, then the AD structures.
    @Test func encodesARotateAsTheIntervalThenTheData() {
        var bytes: [UInt8] = []
        AirMessage.rotate(interval: 0.1, data: [0x02, 0x01, 0x06]).encode(into: &bytes)
        // 08 00 00 00 length | 05 rotate | A0 86 01 00: 100,000 µs | 02 01 06.
        #expect(bytes == [0x08, 0, 0, 0, 0x05, 0xA0, 0x86, 0x01, 0x00, 0x02, 0x01, 0x06])
        bytes = []
        AirMessage.rotated(time: 1, address: BluetoothAddress("3E:E5:E6:9C:5C:54")!).encode(into: &bytes)
        // 0F 00 00 00 | 84 rotated | 1.0 as a little-endian double | the address, most significant first.
        #expect(bytes == [0x0F, 0, 0, 0, 0x84, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x3E, 0xE5, 0xE6, 0x9C, 0x5C, 0x54])
    }

    @Test func rejectsFramesThatBreakTheProtocol() {
        func error(_ bytes: [UInt8]) -> AirWireError? {
            var decoder = AirFrameDecoder()
            decoder.append(bytes)
            do {
                _ = try Self.decodeAll(&decoder)
                return nil
            } catch {
                return error
            }
        }
        #expect(error([0, 0, 0, 0]) == .emptyFrame)
        #expect(error([0xFF, 0xFF, 0xFF, 0x7F, 0x83]) == .frameTooLong(length: 0x7FFF_FFFF))
        #expect(error([1, 0, 0, 0, 0x42]) == .unknownType(0x42))
        // An advertisement needs time (8), address (6) and RSSI (1): 15 bytes of body.
        #expect(error([5, 0, 0, 0, 0x83, 1, 2, 3, 4])
            == .malformed(type: "advertisement", reason: "15 bytes or more expected, 4 received"))
        #expect(error([3, 0, 0, 0, 0x01, 1, 0xC3]) == .malformed(type: "hello", reason: "text that is not UTF-8"))
        // A rotate needs the interval (4); a rotated the time (8) and the address (6).
        #expect(error([3, 0, 0, 0, 0x05, 0xA0, 0x86]) == .malformed(type: "rotate", reason: "4 bytes or more expected, 2 received"))
        #expect(error([9, 0, 0, 0, 0x84, 0, 0, 0, 0, 0, 0, 0, 0])
            == .malformed(type: "rotated", reason: "14 bytes or more expected, 8 received"))
        #expect(error([15, 0, 0, 0, 0x84, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F, 1, 2, 3, 4, 5, 6])
            == .malformed(type: "rotated", reason: "a time that is not a number"))
        // A time that is not a number (NaN's bits).
        #expect(error([16, 0, 0, 0, 0x83, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F, 1, 2, 3, 4, 5, 6, 0xC0])
            == .malformed(type: "advertisement", reason: "a time that is not a number"))
    }

    /// Random bytes, and valid streams with random bytes changed, never trap: each frame either
    /// decodes or is refused with an error.
    @Test func survivesRandomAndCorruptedBytes() {
        var random = SplitMix64(seed: 42)
        let valid = Self.encoded(Self.messages)
        for round in 0..<3_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                // Small lengths, so whole frames of random types and bodies get decoded too.
                if bytes.count > 4, round % 4 == 0 { bytes[0] = UInt8(random.next() % 40); bytes[1...3] = [0, 0, 0] }
            } else {
                bytes = valid
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            var decoder = AirFrameDecoder()
            decoder.append(bytes)
            while true {
                guard let message = try? decoder.next() else { break }
                switch message {
                case .advertisement(let time, _, let rssi, let data):
                    #expect(time.isFinite && (-128...127).contains(rssi) && data.count < AirMessage.largestFrame)
                case .rotate(let interval, let data), .advertise(let interval, let data):
                    #expect(interval.isFinite && interval >= 0 && data.count < AirMessage.largestFrame)
                case .rotated(let time, _), .welcome(let time, _):
                    #expect(time.isFinite)
                default:
                    break
                }
            }
        }
    }
}
