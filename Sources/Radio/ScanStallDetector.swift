/// Notices a radio that has gone quiet while discovery still reads as on, a failure Linux
/// controllers are known for: advertisements stop although nothing reports an error.
///
/// Silence is judged against the recent rate: after `minimumAdvertisements` or more arrived in the
/// last `window` seconds, a silence longer than `expectedGaps` mean gaps (and at least
/// `minimumSilence` seconds) is implausible. The first such silence asks for discovery to be
/// restarted; if the silence lasts as long again, for the adapter's power to be cycled; after that
/// nothing more until an advertisement arrives (the room may really have emptied). Pure: time is a
/// parameter, in seconds on any monotonic clock.
public struct ScanStallDetector: Sendable {
    public struct Configuration: Sendable {
        /// Seconds of history the rate is measured over.
        public var window: Double = 30
        /// Fewer advertisements than this in the window make no silence implausible.
        public var minimumAdvertisements = 20
        /// A silence is implausible beyond this many mean gaps between advertisements…
        public var expectedGaps: Double = 20
        /// …and beyond this many seconds in any case.
        public var minimumSilence: Double = 5

        public init(window: Double = 30, minimumAdvertisements: Int = 20, expectedGaps: Double = 20, minimumSilence: Double = 5) {
            self.window = window
            self.minimumAdvertisements = minimumAdvertisements
            self.expectedGaps = expectedGaps
            self.minimumSilence = minimumSilence
        }
    }

    /// What to do about a silence.
    public enum Action: Sendable, Equatable {
        case restartDiscovery(silence: Double, rate: Double)
        case cyclePower(silence: Double, rate: Double)
    }

    public let configuration: Configuration
    /// Advertisements per whole second, oldest first, for the seconds of the window.
    private var counts: [Int] = []
    /// The second `counts.last` counts.
    private var lastSecond = 0
    private var started: Double?
    private var lastAdvertisement: Double?
    /// Where the current silence is measured from: the last advertisement, or a later discovery start.
    private var silentSince: Double?
    /// 0: nothing done about the current silence; 1: discovery restarted; 2: power cycled.
    private var stage = 0
    private var stageAt = 0.0

    public init(_ configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Counts an advertisement received at `time`; it ends any silence.
    public mutating func advertisement(at time: Double) {
        if started == nil { started = time }
        let second = Int(time.rounded(.down))
        let size = max(1, Int(configuration.window.rounded(.up)))
        if counts.isEmpty || second - lastSecond >= size {
            counts = [0]
        } else if second > lastSecond {
            counts.append(contentsOf: repeatElement(0, count: second - lastSecond))
        }
        if counts.count > size { counts.removeFirst(counts.count - size) }
        lastSecond = max(lastSecond, second)
        counts[counts.count - 1] += 1
        lastAdvertisement = time
        silentSince = time
        stage = 0
    }

    /// Discovery (re)started at `time`, by us or anyone: a silence is measured from here at the earliest.
    public mutating func discoveryStarted(at time: Double) {
        if started == nil { started = time }
        if let since = silentSince, since < time, stage == 0 { silentSince = time }
    }

    /// Advertisements per second before the current silence.
    public var rate: Double {
        guard let started, let lastAdvertisement else { return 0 }
        let span = min(configuration.window, max(1, lastAdvertisement - started))
        return Double(counts.reduce(0, +)) / span
    }

    /// The action the silence at `time` calls for, if any; each is returned once per silence.
    public mutating func check(at time: Double) -> Action? {
        guard let silentSince, counts.reduce(0, +) >= configuration.minimumAdvertisements, rate > 0 else { return nil }
        let limit = max(configuration.minimumSilence, configuration.expectedGaps / rate)
        let silence = time - silentSince
        switch stage {
        case 0 where silence > limit:
            stage = 1
            stageAt = time
            return .restartDiscovery(silence: silence, rate: rate)
        case 1 where time - stageAt > limit:
            stage = 2
            stageAt = time
            return .cyclePower(silence: silence, rate: rate)
        default:
            return nil
        }
    }
}
