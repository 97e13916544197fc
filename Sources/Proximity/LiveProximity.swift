import BeaconFrames
import Radio
import Ranging

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
public struct LiveProximity<C: Clock>: Sendable where C.Duration == Duration {
    public let scanner: any AdvertisementScanner
    public let configuration: RangingConfiguration
    public let tickInterval: Duration
    public let clock: C

    public init(scanner: any AdvertisementScanner, configuration: RangingConfiguration, tickInterval: Duration = .seconds(1), clock: C) {
        self.scanner = scanner
        self.configuration = configuration
        self.tickInterval = tickInterval
        self.clock = clock
    }

    private enum Input: Sendable {
        case advertisement(Advertisement)
        case tick
        /// The scanner failed; nothing follows.
        case failed(any Error)
    }

    /// Runs until the scanner ends or the task is cancelled; `handle` sees every update in order.
    /// Updates for advertisements that caused no event are not handed out.
    public func run(_ handle: (ProximityUpdate) async -> Void) async throws {
        let (inputs, feed) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(65_536))
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
                    try await scanner.scan { feed.yield(.advertisement($0)) }
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
            var failure: (any Error)?
            for await input in inputs {
                events.removeAll(keepingCapacity: true)
                switch input {
                case .failed(let error):
                    failure = error
                case .advertisement(let advertisement):
                    pipeline.feed(advertisement, into: &events)
                    if events.isEmpty { continue }
                    await handle(ProximityUpdate(events: events, tracker: pipeline.tracker, now: advertisement.time, isTick: false))
                case .tick:
                    let now = Self.seconds(start.duration(to: clock.now))
                    pipeline.advance(to: now, into: &events)
                    await handle(ProximityUpdate(events: events, tracker: pipeline.tracker, now: now, isTick: true))
                }
            }
            group.cancelAll()
            while (try? await group.next()) != nil {}
            if let failure { throw failure }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}

extension LiveProximity where C == ContinuousClock {
    public init(scanner: any AdvertisementScanner, configuration: RangingConfiguration, tickInterval: Duration = .seconds(1)) {
        self.init(scanner: scanner, configuration: configuration, tickInterval: tickInterval, clock: ContinuousClock())
    }
}
