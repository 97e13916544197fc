import BeaconFrames

/// Advertisements in, proximity events out: frame decoding and the tracker in one step.
///
/// The one pipeline every source goes through (`replay`, `scan`, the agent, the location
/// beacon); only the radio in front of it differs. Pure: time comes from the advertisements and
/// from ``advance(to:into:)``.
public struct ProximityPipeline: Sendable {
    public private(set) var tracker: ProximityTracker
    /// Advertisements fed so far.
    public private(set) var advertisements = 0
    /// Of those, the ones that held an iBeacon, AltBeacon or Eddystone-UID frame.
    public private(set) var sightings = 0

    public init(configuration: RangingConfiguration) {
        tracker = ProximityTracker(configuration: configuration)
    }

    /// Readings the tracker dropped as implausible.
    public var droppedReadings: Int { tracker.droppedReadings }

    /// Decodes one advertisement and appends the events it causes (exits due before it first).
    /// Returns whether it held a beacon frame.
    @discardableResult
    public mutating func feed(_ advertisement: Advertisement, into events: inout [ProximityEvent]) -> Bool {
        advertisements += 1
        guard let sighting = Sighting(advertisement) else { return false }
        sightings += 1
        tracker.observe(sighting, into: &events)
        return true
    }

    /// Moves time on without a sighting: beacons whose silence passed their timeout exit.
    public mutating func advance(to time: Double, into events: inout [ProximityEvent]) {
        tracker.advance(to: time, into: &events)
    }

    /// Ranges with `model` from now on: see ``ProximityTracker/setDistanceModel(_:)``.
    public mutating func setDistanceModel(_ model: DistanceModel) {
        tracker.setDistanceModel(model)
    }

    /// Ends the source: beacons still present exit at their deadlines.
    public mutating func finish(into events: inout [ProximityEvent]) {
        tracker.finish(into: &events)
    }
}
