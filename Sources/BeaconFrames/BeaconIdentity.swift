/// Who a beacon is: the identity Nearplay tracks presence and distance for.
///
/// Written as in the event format of DESIGN.md: `UUID/major/minor` for iBeacon (UUID
/// upper-case), `altbeacon:ID1/ID2/ID3`, `eddystone:NAMESPACE/INSTANCE` (upper-case hex).
public enum BeaconIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
    case altBeacon(id1: BeaconUUID, id2: UInt16, id3: UInt16)
    /// Namespace (10 bytes) and instance (6 bytes) as one 16-byte value.
    case eddystone(BeaconUUID)

    /// Written out rather than derived, so that the tracker's lookup, which compares identities
    /// at every sighting, can inline it (the derived one is a call into this module).
    @inlinable
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.iBeacon(u1, major1, minor1), .iBeacon(u2, major2, minor2)):
            u1.high == u2.high && u1.low == u2.low && major1 == major2 && minor1 == minor2
        case let (.altBeacon(u1, id21, id31), .altBeacon(u2, id22, id32)):
            u1.high == u2.high && u1.low == u2.low && id21 == id22 && id31 == id32
        case let (.eddystone(u1), .eddystone(u2)):
            u1.high == u2.high && u1.low == u2.low
        default:
            false
        }
    }

    public var description: String {
        switch self {
        case let .iBeacon(uuid, major, minor):
            "\(uuid)/\(major)/\(minor)"
        case let .altBeacon(id1, id2, id3):
            "altbeacon:\(id1)/\(id2)/\(id3)"
        case let .eddystone(id):
            "eddystone:" + id.bytes.prefix(10).map(hexByte).joined() + "/" + id.bytes.suffix(6).map(hexByte).joined()
        }
    }

    /// Parses the written form (case-insensitive hex). Nil when it is not one of the three forms.
    public init?(_ text: some StringProtocol) {
        let lower = text.lowercased()
        if lower.hasPrefix("eddystone:") {
            let parts = lower.dropFirst(10).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 20, parts[1].count == 12,
                  let id = BeaconUUID(parts[0] + parts[1]) else { return nil }
            self = .eddystone(id)
            return
        }
        let isAlt = lower.hasPrefix("altbeacon:")
        let parts = lower.dropFirst(isAlt ? 10 : 0).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let uuid = BeaconUUID(parts[0]),
              let a = UInt16(parts[1]), let b = UInt16(parts[2]) else { return nil }
        self = isAlt ? .altBeacon(id1: uuid, id2: a, id3: b) : .iBeacon(uuid: uuid, major: a, minor: b)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }

    /// One word that mixes every field, so hashing an identity costs one `combine`.
    public var hashWord: UInt64 {
        switch self {
        case let .iBeacon(uuid, major, minor):
            uuid.high ^ (uuid.low &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(major) << 16 | UInt64(minor)) ^ 0x1
        case let .altBeacon(id1, id2, id3):
            id1.high ^ (id1.low &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(id2) << 16 | UInt64(id3)) ^ 0x2
        case let .eddystone(id):
            id.high ^ (id.low &* 0x9E37_79B9_7F4A_7C15) ^ 0x3
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashWord) }
}
