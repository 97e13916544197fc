import BeaconFrames

/// What the ranging layer says about a beacon: it came into range, where it is now, or it left.
public struct ProximityEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case enter, range, exit }

    public var kind: Kind
    /// Seconds, on the clock of the sightings. An exit carries the moment the beacon's silence
    /// passed its exit timeout, which may be earlier than the sighting that revealed it.
    public var time: Double
    public var identity: BeaconIdentity
    public var address: BluetoothAddress
    /// The receiver the sightings came from, when a source has several.
    public var receiver: Receiver?
    /// Enter and range: the raw reading (after the receiver offset); nil when it was unusable.
    public var rssi: Int?
    /// Range: the filtered RSSI in dBm.
    public var filteredRSSI: Double?
    /// Range: metres; nil when the beacon sends no measured power.
    public var distance: Double?
    /// Range: an interval meant to hold the true distance about 68 % of the time (metres); nil
    /// with no distance. See ``RangingUncertainty``.
    public var distanceInterval: ClosedRange<Double>?
    /// Range: the zone after hysteresis.
    public var zone: Zone?

    public init(kind: Kind, time: Double, identity: BeaconIdentity, address: BluetoothAddress, receiver: Receiver? = nil,
                rssi: Int? = nil, filteredRSSI: Double? = nil, distance: Double? = nil, distanceInterval: ClosedRange<Double>? = nil,
                zone: Zone? = nil) {
        self.kind = kind
        self.time = time
        self.identity = identity
        self.address = address
        self.receiver = receiver
        self.rssi = rssi
        self.filteredRSSI = filteredRSSI
        self.distance = distance
        self.distanceInterval = distanceInterval
        self.zone = zone
    }
}
