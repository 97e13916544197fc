import Foundation

/// One beacon identity an agent saw, with its estimated distance in metres.
public struct EncounterSighting: Codable, Sendable {
    public var uuid: UUID
    public var major: Int
    public var minor: Int
    public var distance: Double?
    public var at: Date
    /// Two-way ranging: the filtered RSSI (dBm) the reporter read of this beacon. The lobby hands
    /// it, with `measuredPower`, to the player seen (a `peerReading` event), whose agent combines it
    /// with its own reading of the reporter. Optional: older agents send none.
    public var rssi: Double?
    /// The measured power (dBm at 1 m) this beacon advertises; sent with `rssi`.
    public var measuredPower: Double?
    /// The variance (dB²) of the reporter's filtered RSSI, when known.
    public var rssiVariance: Double?

    public init(uuid: UUID, major: Int, minor: Int, distance: Double?, at: Date,
                rssi: Double? = nil, measuredPower: Double? = nil, rssiVariance: Double? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.distance = distance
        self.at = at
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.rssiVariance = rssiVariance
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
