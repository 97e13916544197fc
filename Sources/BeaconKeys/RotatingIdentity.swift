import Crypto
import Foundation

/// The secret a player's agent (or a location's beacon) shares with the lobby and no one else:
/// 32 random bytes, from which the identity it advertises in each period is derived
/// (``RotatingIdentity``). Written as unpadded base64url in JSON.
public struct BeaconSecret: Sendable, Hashable, Codable, CustomStringConvertible {
    public let bytes: [UInt8]

    public static let length = 32

    /// Nil unless `bytes` is exactly ``length`` bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// Nil unless `text` is base64url (padded or not) of ``length`` bytes.
    public init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        self.init(bytes: Array(data))
    }

    /// A fresh secret from the system's random number generator.
    public static func random() -> BeaconSecret {
        var generator = SystemRandomNumberGenerator()
        return BeaconSecret(bytes: (0..<length).map { _ in generator.next() })!
    }

    public var base64URL: String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Never the secret itself: logs and error messages must not carry it.
    public var description: String { "BeaconSecret(…)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let secret = BeaconSecret(base64URL: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a beacon secret is \(Self.length) bytes in base64url"))
        }
        self = secret
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64URL)
    }
}

/// How time is cut into rotation periods: period n covers
/// [n · seconds, (n + 1) · seconds) of Unix time, the same on every device and the lobby.
public struct RotationPeriod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The length of a period, in seconds (1 or more).
    public let seconds: Int

    /// 15 minutes, as Apple's Find My rolls its keys near the owner.
    public static let standard = RotationPeriod(seconds: 900)!

    public init?(seconds: Int) {
        guard seconds >= 1 else { return nil }
        self.seconds = seconds
    }

    /// The number of the period `date` falls in.
    public func index(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(seconds)).rounded(.down))
    }

    public func start(of index: Int64) -> Date {
        Date(timeIntervalSince1970: Double(index) * Double(seconds))
    }

    public func end(of index: Int64) -> Date { start(of: index + 1) }

    public var description: String { seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s" }

    public init(from decoder: any Decoder) throws {
        let seconds = try decoder.singleValueContainer().decode(Int.self)
        guard let period = RotationPeriod(seconds: seconds) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a rotation period is 1 s or more"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }
}

/// The major and minor a secret advertises in one period: the first four bytes of
/// HMAC-SHA256(secret, "nearplay-beacon-v1" ‖ period number as 8 bytes big-endian). Without the
/// secret, one period's values say nothing about the next one's, so a scanner cannot follow a
/// device from period to period; with it, the lobby maps what was heard back to its owner.
///
/// A player's major is never 0: major 0 under the deployment UUID was the static identity of
/// locations before they rotated, and still is while ``LobbyConfiguration`` lets old identities
/// resolve.
public enum RotatingIdentity {
    static let label = Array("nearplay-beacon-v1".utf8)

    /// The 32-bit value of `secret` in period `index` (major in the high half, minor in the low).
    public static func value(_ secret: BeaconSecret, period index: Int64) -> UInt32 {
        var message = label
        let bits = UInt64(bitPattern: index)
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret.bytes))
        return code.withUnsafeBytes { raw in
            UInt32(raw[0]) << 24 | UInt32(raw[1]) << 16 | UInt32(raw[2]) << 8 | UInt32(raw[3])
        }
    }

    /// A player's major and minor in period `index`: major 1…65535, minor 0…65535.
    public static func player(_ secret: BeaconSecret, period index: Int64) -> (major: Int, minor: Int) {
        split(value(secret, period: index), majorFloor: 1)
    }

    /// A location's major and minor in period `index` (under the deployment's location UUID):
    /// any 32 bits.
    public static func location(_ secret: BeaconSecret, period index: Int64) -> (major: Int, minor: Int) {
        split(value(secret, period: index), majorFloor: 0)
    }

    /// The (major, minor) of `value`, with majors below `majorFloor` folded into the rest.
    static func split(_ value: UInt32, majorFloor: Int) -> (major: Int, minor: Int) {
        let high = Int(value >> 16), minor = Int(value & 0xFFFF)
        let major = high < majorFloor ? majorFloor + high : high
        return (major, minor)
    }

    /// The 32-bit key of a (major, minor) pair, as the lobby's tables hold it.
    public static func key(major: Int, minor: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: major) << 16 | UInt32(truncatingIfNeeded: minor & 0xFFFF)
    }

    /// The proximity UUID the locations of a deployment advertise under: derived from the
    /// players' so both sides compute it, and distinct, so an agent tells a location from a
    /// player without asking. (A location is a public place; saying "a Nearplay location is
    /// here" hides nothing.) SHA-256 of "nearplay-location-v1" and the deployment UUID's bytes,
    /// cut to 16 bytes and marked as an RFC 9562 version 8 UUID.
    public static func locationUUID(deployment: UUID) -> UUID {
        var input = Array("nearplay-location-v1".utf8)
        withUnsafeBytes(of: deployment.uuid) { input.append(contentsOf: $0) }
        var bytes = Array(SHA256.hash(data: input).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
