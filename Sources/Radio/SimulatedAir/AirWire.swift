import BeaconFrames

/// The messages between the simulated air's hub and its clients.
///
/// On the socket each is a frame: a 32-bit little-endian length (of what follows), a type byte,
/// then the body. Numbers are little-endian, times IEEE 754 doubles in scenario seconds,
/// addresses six bytes most-significant first. Binary and length-prefixed so a scanner decodes a
/// whole read of frames without parsing text (200 beacons at 10 Hz is 2,000 frames a second).
enum AirMessage: Sendable, Hashable {
    /// Client → hub, first: the protocol version and the scenario device the client speaks for.
    case hello(version: UInt8, device: String)
    /// Client → hub: transmit these AD structures every `interval` seconds (sent in microseconds).
    case advertise(interval: Double, data: [UInt8])
    /// Client → hub: transmit these AD structures from now on, from a fresh random address, as a
    /// rotating identity does: the hub switches data and address between two transmissions (so
    /// no frame has the new data from the old address or the reverse) and answers ``rotated``.
    /// The first one starts transmitting, like ``advertise``.
    case rotate(interval: Double, data: [UInt8])
    /// Client → hub: stop transmitting.
    case withdraw
    /// Client → hub: deliver what this device hears.
    case scan
    /// Hub → client, after hello: the hub's scenario time and the device's address.
    case welcome(time: Double, address: BluetoothAddress)
    /// Hub → client, after rotate: the scenario time of the switch and the address the device
    /// transmits from since.
    case rotated(time: Double, address: BluetoothAddress)
    /// Hub → client: the connection is refused, and why; the hub closes it.
    case refused(String)
    /// Hub → scanning client: a frame heard.
    case advertisement(time: Double, address: BluetoothAddress, rssi: Int, data: [UInt8])

    /// 2 added rotate and rotated: a hub of version 1 would close the connection at a rotate
    /// without a word, so the versions must differ for it to refuse with a sentence.
    static let version: UInt8 = 2
    /// The longest frame either side accepts (length field included): room for 255 bytes of
    /// advertising data or a long refusal.
    static let largestFrame = 1024

    enum Kind: UInt8 {
        case hello = 0x01, advertise = 0x02, withdraw = 0x03, scan = 0x04, rotate = 0x05
        case welcome = 0x81, refused = 0x82, advertisement = 0x83, rotated = 0x84
    }

    /// Appends this message as one frame.
    func encode(into buffer: inout [UInt8]) {
        switch self {
        case .hello(let version, let device):
            Self.frame(.hello, into: &buffer) { $0.append(version); $0.append(contentsOf: device.utf8.prefix(SimulatedAir.longestDeviceName)) }
        case .advertise(let interval, let data):
            Self.frame(.advertise, into: &buffer) { Self.appendTransmission(interval: interval, data: data, to: &$0) }
        case .rotate(let interval, let data):
            Self.frame(.rotate, into: &buffer) { Self.appendTransmission(interval: interval, data: data, to: &$0) }
        case .withdraw:
            Self.frame(.withdraw, into: &buffer) { _ in }
        case .scan:
            Self.frame(.scan, into: &buffer) { _ in }
        case .welcome(let time, let address):
            Self.frame(.welcome, into: &buffer) { Self.append64(time.bitPattern, to: &$0); $0.append(contentsOf: address.array) }
        case .rotated(let time, let address):
            Self.frame(.rotated, into: &buffer) { Self.append64(time.bitPattern, to: &$0); $0.append(contentsOf: address.array) }
        case .refused(let message):
            // Cut by characters, so a long message stays valid UTF-8.
            let text = message.utf8.count <= Self.largestFrame - 5 ? message : String(message.prefix(240))
            Self.frame(.refused, into: &buffer) { $0.append(contentsOf: text.utf8) }
        case .advertisement(let time, let address, let rssi, let data):
            Self.appendAdvertisement(time: time, address: address, rssi: rssi, data: data, to: &buffer)
        }
    }

    /// The hub's hot path: one advertisement frame, written straight into a connection's buffer.
    static func appendAdvertisement(time: Double, address: BluetoothAddress, rssi: Int, data: [UInt8],
                                    to buffer: inout [UInt8]) {
        let payload = data.count <= 255 ? data[...] : data.prefix(255)
        append32(UInt32(1 + 8 + 6 + 1 + payload.count), to: &buffer)
        buffer.append(Kind.advertisement.rawValue)
        append64(time.bitPattern, to: &buffer)
        let value = address.value
        for shift in stride(from: 40, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        buffer.append(UInt8(bitPattern: Int8(clamping: rssi)))
        buffer.append(contentsOf: payload)
    }

    /// The body of advertise and rotate: the interval in microseconds (32 bits), then the data.
    private static func appendTransmission(interval: Double, data: [UInt8], to buffer: inout [UInt8]) {
        let microseconds = UInt32(clamping: Int((interval.isFinite ? interval * 1_000_000 : 0).rounded()))
        append32(microseconds, to: &buffer)
        buffer.append(contentsOf: data.prefix(255))
    }

    private static func frame(_ kind: Kind, into buffer: inout [UInt8], body: (inout [UInt8]) -> Void) {
        let lengthAt = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0, kind.rawValue])
        body(&buffer)
        let length = UInt32(buffer.count - lengthAt - 4)
        for i in 0..<4 { buffer[lengthAt + i] = UInt8(truncatingIfNeeded: length >> UInt32(8 * i)) }
    }

    private static func append32(_ value: UInt32, to buffer: inout [UInt8]) {
        for i in 0..<4 { buffer.append(UInt8(truncatingIfNeeded: value >> UInt32(8 * i))) }
    }

    private static func append64(_ value: UInt64, to buffer: inout [UInt8]) {
        for i in 0..<8 { buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }
}

/// A frame that breaks the protocol. The side that reads one closes the connection.
enum AirWireError: Error, Sendable, Hashable, CustomStringConvertible {
    case frameTooLong(length: Int)
    case emptyFrame
    case unknownType(UInt8)
    /// The body does not fit its type: `needed` bytes or more expected, `got` present, or text
    /// that is not UTF-8.
    case malformed(type: String, reason: String)

    var description: String {
        switch self {
        case .frameTooLong(let length):
            "a frame announces \(length) bytes, more than the \(AirMessage.largestFrame) allowed"
        case .emptyFrame:
            "a frame of length 0 has no type byte"
        case .unknownType(let type):
            "unknown frame type 0x\(String(type, radix: 16, uppercase: true))"
        case .malformed(let type, let reason):
            "malformed \(type) frame: \(reason)"
        }
    }
}

/// Cuts a byte stream into ``AirMessage``s: whatever one read brought, however it splits
/// frames. Every length and offset is checked against the bytes present; nothing traps.
struct AirFrameDecoder {
    private var buffer: [UInt8] = []
    private var start = 0

    /// Bytes received and not yet decoded.
    var pending: Int { buffer.count - start }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete message, or nil until more bytes arrive.
    mutating func next() throws(AirWireError) -> AirMessage? {
        guard buffer.count - start >= 4 else { return nil }
        var length = 0
        for i in 0..<4 { length |= Int(buffer[start + i]) << (8 * i) }
        guard length > 0 else { throw .emptyFrame }
        guard length + 4 <= AirMessage.largestFrame else { throw .frameTooLong(length: length) }
        guard buffer.count - start >= 4 + length else { return nil }
        let body = start + 5
        let end = start + 4 + length
        let type = buffer[start + 4]
        start = end
        return try Self.decode(type: type, buffer[body..<end])
    }

    private static func decode(type: UInt8, _ body: ArraySlice<UInt8>) throws(AirWireError) -> AirMessage {
        guard let kind = AirMessage.Kind(rawValue: type) else { throw .unknownType(type) }
        let base = body.startIndex
        func need(_ count: Int, _ name: String) throws(AirWireError) {
            guard body.count >= count else {
                throw .malformed(type: name, reason: "\(count) bytes or more expected, \(body.count) received")
            }
        }
        func uint64(at offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<8 { value |= UInt64(body[base + offset + i]) << UInt64(8 * i) }
            return value
        }
        func address(at offset: Int) -> BluetoothAddress {
            BluetoothAddress(body[base + offset], body[base + offset + 1], body[base + offset + 2],
                             body[base + offset + 3], body[base + offset + 4], body[base + offset + 5])
        }
        func text(from offset: Int, _ name: String) throws(AirWireError) -> String {
            guard let text = String(validating: body[(base + offset)...], as: UTF8.self) else {
                throw .malformed(type: name, reason: "text that is not UTF-8")
            }
            return text
        }
        switch kind {
        case .hello:
            try need(1, "hello")
            return .hello(version: body[base], device: try text(from: 1, "hello"))
        case .advertise, .rotate:
            let name = kind == .advertise ? "advertise" : "rotate"
            try need(4, name)
            var microseconds: UInt32 = 0
            for i in 0..<4 { microseconds |= UInt32(body[base + i]) << UInt32(8 * i) }
            let interval = Double(microseconds) / 1_000_000, data = Array(body[(base + 4)...])
            return kind == .advertise ? .advertise(interval: interval, data: data) : .rotate(interval: interval, data: data)
        case .withdraw:
            return .withdraw
        case .scan:
            return .scan
        case .welcome, .rotated:
            let name = kind == .welcome ? "welcome" : "rotated"
            try need(14, name)
            let time = Double(bitPattern: uint64(at: 0))
            guard time.isFinite else { throw .malformed(type: name, reason: "a time that is not a number") }
            return kind == .welcome ? .welcome(time: time, address: address(at: 8)) : .rotated(time: time, address: address(at: 8))
        case .refused:
            return .refused(try text(from: 0, "refused"))
        case .advertisement:
            try need(15, "advertisement")
            let time = Double(bitPattern: uint64(at: 0))
            guard time.isFinite else { throw .malformed(type: "advertisement", reason: "a time that is not a number") }
            return .advertisement(time: time, address: address(at: 8), rssi: Int(Int8(bitPattern: body[base + 14])),
                                  data: Array(body[(base + 15)...]))
        }
    }
}
