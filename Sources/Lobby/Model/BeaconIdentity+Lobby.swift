import BeaconFrames
import Foundation

// The lobby's identities are iBeacon identities (the deployment's UUID or its locations' UUID,
// a major and a minor). This file is the one place a `BeaconIdentity` meets the API's flat
// `{"uuid", "major", "minor"}` and Foundation's `UUID`.

extension BeaconIdentity {
    /// An iBeacon identity under `uuid`.
    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self = .iBeacon(uuid: BeaconUUID(uuid), major: major, minor: minor)
    }

    /// An iBeacon identity from numbers a request gave; nil when major or minor is not 0…65535.
    public init?(uuid: UUID, major: Int, minor: Int) {
        guard let major = UInt16(exactly: major), let minor = UInt16(exactly: minor) else { return nil }
        self.init(uuid: uuid, major: major, minor: minor)
    }

    /// The UUID, major and minor of an iBeacon identity; nil for AltBeacon and Eddystone ones,
    /// which no player or location of the lobby advertises.
    public var iBeaconFields: (uuid: UUID, major: Int, minor: Int)? {
        guard case let .iBeacon(uuid, major, minor) = self else { return nil }
        return (UUID(uuid), Int(major), Int(minor))
    }
}

extension BeaconUUID {
    init(_ uuid: UUID) {
        self.init(bytes: withUnsafeBytes(of: uuid.uuid) { Array($0) })!
    }
}

extension UUID {
    init(_ uuid: BeaconUUID) {
        let b = uuid.bytes
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}

/// An identity in the API: `{"uuid": "E2C56DB5-…", "major": 1, "minor": 2}`, the UUID upper-case.
extension BeaconIdentity: Codable {
    enum LobbyCodingKeys: String, CodingKey { case uuid, major, minor }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: LobbyCodingKeys.self)
        let uuid = try container.decode(UUID.self, forKey: .uuid)
        self.init(uuid: uuid, major: try container.decode(UInt16.self, forKey: .major),
                  minor: try container.decode(UInt16.self, forKey: .minor))
    }

    public func encode(to encoder: any Encoder) throws {
        guard let (uuid, major, minor) = iBeaconFields else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                debugDescription: "The lobby's API carries iBeacon identities only, not \(self)."))
        }
        var container = encoder.container(keyedBy: LobbyCodingKeys.self)
        try container.encode(uuid, forKey: .uuid)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
    }
}
