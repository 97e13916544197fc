import BeaconFrames
import Ranging

/// Drives trace records through decoding and ranging, in order, and hands out the events with
/// the ground truth of the record that caused them.
public struct Replay {
    public struct Summary: Sendable, Hashable {
        public var advertisements = 0
        /// Advertisements that held an iBeacon, AltBeacon or Eddystone-UID frame.
        public var sightings = 0
        public var droppedReadings = 0
        public var events = 0
    }

    public private(set) var pipeline: ProximityPipeline
    public private(set) var summary = Summary()
    private var buffer: [ProximityEvent] = []

    public init(configuration: RangingConfiguration) {
        pipeline = ProximityPipeline(configuration: configuration)
    }

    public var tracker: ProximityTracker { pipeline.tracker }

    /// Feeds one record; `emit` gets each event it causes (exits due before it first), with the
    /// record's `truth_m` attached to its range event.
    public mutating func feed(_ record: TraceRecord, emit: (ProximityEvent, Double?) -> Void) {
        buffer.removeAll(keepingCapacity: true)
        pipeline.feed(record.advertisement, into: &buffer)
        summary.advertisements = pipeline.advertisements
        summary.sightings = pipeline.sightings
        summary.droppedReadings = pipeline.droppedReadings
        for event in buffer {
            summary.events += 1
            emit(event, event.kind == .range ? record.truthDistance : nil)
        }
    }

    /// Ends the trace: beacons still present exit at their deadlines.
    public mutating func finish(emit: (ProximityEvent, Double?) -> Void) {
        buffer.removeAll(keepingCapacity: true)
        pipeline.finish(into: &buffer)
        for event in buffer {
            summary.events += 1
            emit(event, nil)
        }
    }

    /// Replays all records and returns every event with its truth.
    public static func run(_ records: [TraceRecord], configuration: RangingConfiguration) -> (events: [(ProximityEvent, Double?)], summary: Summary) {
        var replay = Replay(configuration: configuration)
        var events: [(ProximityEvent, Double?)] = []
        for record in records { replay.feed(record) { events.append(($0, $1)) } }
        replay.finish { events.append(($0, $1)) }
        return (events, replay.summary)
    }
}
