import BeaconFrames
import Foundation

/// What an agent reports of one beacon identity it heard: when, how far away it estimated it,
/// and (for two-way ranging) what it read of it. Not a radio sighting (``BeaconFrames/Sighting``)
/// but the agent's account of one; a report names players and locations by the identity they
/// advertise.
///
/// In the API: `{"uuid", "major", "minor", "distance", "at", "rssi", "measuredPower",
/// "rssiVariance"}`.
public struct EncounterReport: Sendable {
    /// The identity heard; always an iBeacon one.
    public var beacon: BeaconIdentity
    /// Metres; nil when unknown.
    public var distance: Double?
    public var at: Date
    /// Two-way ranging: the filtered RSSI (dBm) the reporter read of this beacon. The lobby hands
    /// it, with `measuredPower`, to the player seen (a `peerReading` event), whose agent combines it
    /// with its own reading of the reporter. Optional: older agents send none.
    public var rssi: Double?
    /// The measured power this beacon advertises; sent with `rssi`.
    public var measuredPower: MeasuredPower?
    /// The variance (dB²) of the reporter's filtered RSSI, when known.
    public var rssiVariance: Double?

    public init(_ beacon: BeaconIdentity, distance: Double?, at: Date,
                rssi: Double? = nil, measuredPower: MeasuredPower? = nil, rssiVariance: Double? = nil) {
        self.beacon = beacon
        self.distance = distance
        self.at = at
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.rssiVariance = rssiVariance
    }
}

extension EncounterReport: Codable {
    enum CodingKeys: String, CodingKey { case uuid, major, minor, distance, at, rssi, measuredPower, rssiVariance }

    /// A major or minor out of 0…65535 is refused as the lobby refuses any field out of range
    /// (`invalidField`, naming the field by its path in the body), not as undecodable JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let uuid = try container.decode(UUID.self, forKey: .uuid)
        let major = try container.decode(Int.self, forKey: .major)
        let minor = try container.decode(Int.self, forKey: .minor)
        for (name, value) in [("major", major), ("minor", minor)] where !(0...65535).contains(value) {
            throw LobbyError.invalid(Self.path(decoder.codingPath, name), "must be 0…65535, got \(value).")
        }
        self.init(BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                  distance: try container.decodeIfPresent(Double.self, forKey: .distance),
                  at: try container.decode(Date.self, forKey: .at),
                  rssi: try container.decodeIfPresent(Double.self, forKey: .rssi),
                  measuredPower: try container.decodeIfPresent(MeasuredPower.self, forKey: .measuredPower),
                  rssiVariance: try container.decodeIfPresent(Double.self, forKey: .rssiVariance))
    }

    public func encode(to encoder: any Encoder) throws {
        guard let (uuid, major, minor) = beacon.iBeaconFields else {
            throw EncodingError.invalidValue(beacon, .init(codingPath: encoder.codingPath,
                debugDescription: "The lobby's API carries iBeacon identities only, not \(beacon)."))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uuid, forKey: .uuid)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
        try container.encodeIfPresent(distance, forKey: .distance)
        try container.encode(at, forKey: .at)
        try container.encodeIfPresent(rssi, forKey: .rssi)
        try container.encodeIfPresent(measuredPower, forKey: .measuredPower)
        try container.encodeIfPresent(rssiVariance, forKey: .rssiVariance)
    }

    /// `sightings[3].major` for the field `major` of the fourth sighting.
    static func path(_ codingPath: [any CodingKey], _ field: String) -> String {
        let parent = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return String((parent + "." + field).drop(while: { $0 == "." }))
    }
}

/// What became of a batch of sightings.
public struct EncounterReceipt: Codable, Sendable, Equatable {
    /// Sightings of known players, recorded.
    public var recorded: Int
    /// Sightings of identities that are no player of this deployment (or of the reporter itself).
    public var ignored: Int
    /// Sightings among the ignored that were refused for a reason the reporter should know
    /// (a location's identity from a period that is over): omitted when none.
    public var refused: [SightingRefusal]?

    public init(recorded: Int, ignored: Int, refused: [SightingRefusal]? = nil) {
        self.recorded = recorded
        self.ignored = ignored
        self.refused = refused
    }
}
