import BeaconFrames

/// Everything that decides how sightings become proximity events.
public struct RangingConfiguration: Sendable, Hashable {
    public var filter: RSSIFilterKind = .defaultFollowing
    public var distanceModel: DistanceModel = .default
    /// Added to every reading before filtering: the receiver's calibration offset in dB
    /// (positive when it reads weaker than the reference receiver the measured power came from).
    public var rssiOffset: Double = 0
    /// Offsets for named receivers, when a source has several; others get ``rssiOffset``.
    public var receiverOffsets: [Receiver: Double] = [:]
    public var zones = ZoneBoundaries()
    public var presence = PresenceConfiguration()
    /// How wide range events' distance intervals are.
    public var uncertainty = RangingUncertainty()
    /// Seconds between range events per beacon; 0 gives one at every sighting.
    public var rangeInterval: Double = 0

    public init(filter: RSSIFilterKind = .defaultFollowing, distanceModel: DistanceModel = .default, rssiOffset: Double = 0,
                receiverOffsets: [Receiver: Double] = [:], zones: ZoneBoundaries = ZoneBoundaries(),
                presence: PresenceConfiguration = PresenceConfiguration(), uncertainty: RangingUncertainty = RangingUncertainty(),
                rangeInterval: Double = 0) {
        self.filter = filter
        self.distanceModel = distanceModel
        self.rssiOffset = rssiOffset
        self.receiverOffsets = receiverOffsets
        self.zones = zones
        self.presence = presence
        self.uncertainty = uncertainty
        self.rangeInterval = rangeInterval
    }

    /// RSSI readings a radio can really report, in dBm. Outside it (0 and above, below −127,
    /// the 127 "unavailable" sentinel) a reading is dropped and counted.
    public static let plausibleRSSI = -127...(-1)

    /// The offset for readings from `receiver`.
    @inline(__always)
    public func offset(for receiver: Receiver?) -> Double {
        guard let receiver, !receiverOffsets.isEmpty else { return rssiOffset }
        return receiverOffsets[receiver] ?? rssiOffset
    }
}
