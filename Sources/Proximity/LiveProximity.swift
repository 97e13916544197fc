import BeaconFrames
import Radio
import Ranging
import Synchronization

/// What the pipeline said after one input: the events it caused and the state of every track.
public struct ProximityUpdate: Sendable {
    public var events: [ProximityEvent]
    public var tracker: ProximityTracker
    /// Seconds since the scan began, on the pipeline's clock.
    public var now: Double
    /// True for the periodic tick (exits found, ages moved on), false for an advertisement.
    public var isTick: Bool
}

/// A live radio through the proximity pipeline: scanner → sightings → tracker → events, with a
/// periodic tick so beacons that fall silent exit even when nothing else is heard.
///
/// Everything happens in one loop, so the tracker needs no lock. The clock is injected: the
/// ticks and the tick times come from it, the advertisements carry their own times (seconds
/// since the scan began, per the ``AdvertisementScanner`` contract).
///
/// The scanner's advertisements reach the loop through a buffer, and the loop is woken only when
/// the buffer goes from empty to not: a backend that hands over a burst (the simulated air's 10 ms
/// batches, a D-Bus read of several signals) costs one wake-up per burst rather than one thread
/// hand-off per advertisement.
public struct LiveProximity<C: Clock>: Sendable where C.Duration == Duration {
    public let scanner: any AdvertisementScanner
    public let configuration: RangingConfiguration
    public let tickInterval: Duration
    public let clock: C
    /// When set, the distance model is this switch's (not ``configuration``'s), and follows it
    /// while the pipeline runs.
    public let distanceModel: DistanceModelSwitch?

    public init(scanner: any AdvertisementScanner, configuration: RangingConfiguration, tickInterval: Duration = .seconds(1), clock: C,
                distanceModel: DistanceModelSwitch? = nil) {
        self.scanner = scanner
        self.configuration = configuration
        self.tickInterval = tickInterval
        self.clock = clock
        self.distanceModel = distanceModel
    }

    private enum Input: Sendable {
        /// The buffer of advertisements has something in it.
        case advertisements
        case tick
        /// The scanner failed; nothing follows.
        case failed(any Error)
    }

    /// Runs until the scanner ends or the task is cancelled; `handle` sees every update in order.
    /// Updates for advertisements that caused no event are not handed out.
    public func run(_ handle: (ProximityUpdate) async -> Void) async throws {
        let (inputs, feed) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(65_536))
        let buffer = AdvertisementBuffer()
        let start = clock.now
        let clock = clock
        let tickInterval = tickInterval
        let scanner = scanner
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The scanner's failure travels with the feed: waiting on the group, the ticker's
            // cancellation could come first and hide it.
            group.addTask {
                defer { feed.finish() }
                do {
                    try await scanner.scan { if buffer.append($0) { feed.yield(.advertisements) } }
                } catch {
                    feed.yield(.failed(error))
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try await clock.sleep(for: tickInterval)
                    feed.yield(.tick)
                }
            }
            var pipeline = ProximityPipeline(configuration: configuration)
            var events: [ProximityEvent] = []
            var heard: [Advertisement] = []
            var failure: (any Error)?
            var modelGeneration = UInt64.max  // no generation yet: the switch's model applies from the first batch
            /// Everything buffered through the pipeline, in order.
            func drain() async {
                if let model = distanceModel?.changed(since: &modelGeneration) { pipeline.setDistanceModel(model) }
                buffer.take(&heard)
                for advertisement in heard {
                    events.removeAll(keepingCapacity: true)
                    pipeline.feed(advertisement, into: &events)
                    if events.isEmpty { continue }
                    await handle(ProximityUpdate(events: events, tracker: pipeline.tracker, now: advertisement.time, isTick: false))
                }
            }
            for await input in inputs {
                switch input {
                case .failed(let error):
                    failure = error
                case .advertisements:
                    await drain()
                case .tick:
                    // What was heard before the tick goes first.
                    await drain()
                    events.removeAll(keepingCapacity: true)
                    let now = start.duration(to: clock.now).inSeconds
                    pipeline.advance(to: now, into: &events)
                    await handle(ProximityUpdate(events: events, tracker: pipeline.tracker, now: now, isTick: true))
                }
            }
            // The scanner ended: what it heard last still counts.
            await drain()
            group.cancelAll()
            while (try? await group.next()) != nil {}
            if let failure { throw failure }
        }
    }

}

/// Advertisements heard but not yet through the pipeline, in order.
private final class AdvertisementBuffer: Sendable {
    let advertisements = Mutex<[Advertisement]>([])
    /// As many as the feed held before: a loop that falls this far behind loses the oldest.
    static let limit = 65_536

    /// Appends; true when the buffer was empty, so the loop must be woken.
    func append(_ advertisement: Advertisement) -> Bool {
        advertisements.withLock { buffered in
            if buffered.count >= Self.limit { buffered.removeFirst() }
            buffered.append(advertisement)
            return buffered.count == 1
        }
    }

    /// Everything buffered, leaving `spare`'s storage in its place.
    func take(_ spare: inout [Advertisement]) {
        spare.removeAll(keepingCapacity: true)
        advertisements.withLock { swap(&$0, &spare) }
    }
}

extension LiveProximity where C == ContinuousClock {
    public init(scanner: any AdvertisementScanner, configuration: RangingConfiguration, tickInterval: Duration = .seconds(1),
                distanceModel: DistanceModelSwitch? = nil) {
        self.init(scanner: scanner, configuration: configuration, tickInterval: tickInterval, clock: ContinuousClock(),
                  distanceModel: distanceModel)
    }
}
