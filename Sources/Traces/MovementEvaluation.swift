import BeaconFrames
import Foundation
import Ranging

/// How ranging follows a person who moves and holds one who stands still: what `nearplay eval
/// --walks` measures.
///
/// Two figures, which pull against each other:
/// - **settling time** on a simulated walk: a beacon stands at 14 m, is walked in to 1.5 m at
///   1.5 m/s and then stands still; the time from the stop until the estimate comes within ±30 %
///   of the truth and stays there (``settlingBound``);
/// - **zone changes per hour of standing**: on the walk's standing phase and on beacons standing
///   still at and between the zone boundaries (simulated), and on the recordings' still segments
///   (``StillSegments``). Only a still beacon's zone changes are counted, so each one is jitter:
///   the first ``settleAllowance`` seconds of each standing phase, where the estimate may still be
///   arriving from wherever it was, are left out.
///
/// The simulated room is the simulated air's: n = 2.8, 4 dB of per-packet noise, 10 % loss.
public enum MovementEvaluation {
    /// The estimate counts as settled within this fraction of the true distance.
    public static let settlingBound = 0.3
    /// Seconds at the start of each standing phase whose zone changes are not counted.
    public static let settleAllowance = 30.0
    /// A standing phase (simulated or recorded) must last this long to be counted (seconds).
    public static let shortestStill = 60.0

    /// The walk: 30 s at 14 m, in to 1.5 m at 1.5 m/s, then standing 120 s.
    public static let walkStart = 14.0, walkEnd = 1.5, walkSpeed = 1.5
    public static let standingBefore = 30.0, standingAfter = 120.0
    /// When the walker stops (seconds into the script).
    public static var stopTime: Double { standingBefore + (walkStart - walkEnd) / walkSpeed }
    /// Beacons that only stand, each `stillSeconds` long: at the immediate boundary, in the
    /// middle of near, at the near/far boundary and in far (metres).
    public static let stillDistances = [0.5, 1.5, 3.0, 6.0]
    public static let stillSeconds = 600.0
    public static let seeds: [UInt64] = [1, 2, 3, 4, 5]

    static let walkerIdentity = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/7/1"
    static let walker = BeaconIdentity(walkerIdentity)

    /// The walk and the still beacons, all advertising every `interval` seconds.
    public static func script(interval: Double) -> WalkScript {
        var beacons = [WalkScript.Beacon(beacon: walkerIdentity, interval: interval,
                                         waypoints: [[0, walkStart], [standingBefore, walkStart], [stopTime, walkEnd],
                                                     [stopTime + standingAfter, walkEnd]])]
        for (index, distance) in stillDistances.enumerated() {
            beacons.append(.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/8/\(index + 1)", interval: interval,
                                 waypoints: [[0, distance], [stillSeconds, distance]]))
        }
        return WalkScript(beacons: beacons)
    }

    /// What one advertising interval gave over the seeds.
    public struct Result: Sendable, Hashable {
        public var interval: Double
        /// Per seed, seconds from the stop until the estimate stayed within the bound; nil when
        /// it never did before the walk ended.
        public var settling: [Double?]
        /// Zone changes in the simulated standing phases, and the hours counted.
        public var standing: ZoneChangeCount

        /// The median over seeds (a seed that never settled counts as the longest).
        public var medianSettling: Double? {
            let values = settling.map { $0 ?? .infinity }
            guard !values.isEmpty else { return nil }
            return Calibration.median(values)
        }
    }

    /// Runs the walk and the still beacons at one advertising interval with `configuration`
    /// (range events at every sighting), once per seed.
    public static func simulate(configuration: RangingConfiguration, interval: Double, seeds: [UInt64] = seeds) -> Result {
        var ranging = configuration
        ranging.rangeInterval = 0
        let script = script(interval: interval)
        var result = Result(interval: interval, settling: [], standing: ZoneChangeCount())
        for seed in seeds {
            let parameters = SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 4, packetLoss: 0.1, seed: seed)
            let (records, _) = Simulator.run(script, parameters: parameters)
            let events = Replay.run(records, configuration: ranging).events
            var walked: [(time: Double, distance: Double?)] = []
            var segments = StillSegments()
            for (event, truth) in events where event.kind == .range {
                segments.add(event, truth: truth)
                if event.identity == walker { walked.append((event.time, event.distance)) }
            }
            result.settling.append(settling(walked, stop: stopTime, truth: walkEnd))
            result.standing.add(segments.finish())
        }
        return result
    }

    /// Seconds from `stop` to the first estimate after which every estimate is within
    /// ``settlingBound`` of `truth`: 0 when none after the stop is out of it, nil when the last
    /// one is (or there is none after the stop).
    public static func settling(_ estimates: [(time: Double, distance: Double?)], stop: Double, truth: Double) -> Double? {
        let after = estimates.filter { $0.time >= stop }
        guard !after.isEmpty else { return nil }
        guard let lastOff = after.lastIndex(where: { estimate in
            estimate.distance.map { abs($0 - truth) > settlingBound * truth } ?? true
        }) else { return 0 }
        let settled = after.index(after: lastOff)
        return settled < after.endIndex ? after[settled].time - stop : nil
    }

    /// The lines `eval --walks` prints for the simulated walks: a Markdown table and the verdict
    /// against the goals (`goals` maps an interval in seconds to the settling goal in seconds).
    public static func lines(_ results: [Result], goals: [Double: Double] = [0.1: 2, 1: 5]) -> [String] {
        func rate(_ interval: Double) -> String { String(format: "%g Hz", 1 / interval) }
        func seconds(_ value: Double?) -> String { value.map { $0.isFinite ? String(format: "%.1f s", $0) : "never" } ?? "never" }
        var lines = [
            String(format: "Following a walk (simulated: %g m to %g m at %g m/s, then standing %g s; n = 2.8, 4 dB noise, 10 %% loss; %d seeds):",
                   walkStart, walkEnd, walkSpeed, standingAfter, results.first?.settling.count ?? 0),
            "",
            "| advertising | settling within ±30 % (median) | per seed | standing hours | zone changes | per hour standing |",
            "|---|---:|---|---:|---:|---:|",
        ]
        for result in results {
            lines.append("| \(rate(result.interval)) | \(seconds(result.medianSettling)) | \(result.settling.map { seconds($0) }.joined(separator: ", "))"
                + String(format: " | %.2f | %d | %.1f |", result.standing.hours, result.standing.changes, result.standing.perHour ?? 0))
        }
        lines.append("")
        for result in results {
            guard let goal = goals[result.interval] else { continue }
            let holds = (result.medianSettling ?? .infinity) <= goal
            lines.append("- settling at \(rate(result.interval)) within \(seconds(goal)): \(holds ? "holds" : "does not hold") (\(seconds(result.medianSettling)))")
        }
        return lines
    }
}

/// Zone changes counted over a stretch of standing.
public struct ZoneChangeCount: Sendable, Hashable {
    public var changes = 0
    /// Seconds counted.
    public var seconds = 0.0

    public init(changes: Int = 0, seconds: Double = 0) {
        self.changes = changes
        self.seconds = seconds
    }

    public var hours: Double { seconds / 3600 }
    public var perHour: Double? { seconds > 0 ? Double(changes) / hours : nil }

    public mutating func add(_ other: ZoneChangeCount) {
        changes += other.changes
        seconds += other.seconds
    }
}

/// Zone changes of beacons standing still: range events grouped per beacon and receiver into
/// runs of one unchanging truth (no silence longer than 30 s inside), and in runs of at least
/// ``MovementEvaluation/shortestStill`` seconds, the changes of the reported zone from
/// ``MovementEvaluation/settleAllowance`` seconds in.
public struct StillSegments: Sendable {
    private struct Key: Hashable {
        var identity: BeaconIdentity
        var receiver: Receiver?
    }

    private struct Run {
        var truth: Double
        var start: Double
        var last: Double
        var zones: [(time: Double, zone: Zone?)]
    }

    /// The longest silence inside one still run (seconds).
    public static let longestSilence = 30.0

    private var open: [Key: Run] = [:]
    private var counted = ZoneChangeCount()

    public init() {}

    /// Adds a range event (others are ignored) with its truth; events without truth end the run.
    public mutating func add(_ event: ProximityEvent, truth: Double?) {
        guard event.kind == .range else { return }
        let key = Key(identity: event.identity, receiver: event.receiver)
        if var run = open[key], let truth, run.truth == truth, event.time - run.last <= Self.longestSilence {
            run.last = event.time
            run.zones.append((event.time, event.zone))
            open[key] = run
            return
        }
        if let run = open.removeValue(forKey: key) { count(run) }
        if let truth { open[key] = Run(truth: truth, start: event.time, last: event.time, zones: [(event.time, event.zone)]) }
    }

    /// Closes the runs still open and returns the count.
    public mutating func finish() -> ZoneChangeCount {
        for run in open.values { count(run) }
        open = [:]
        return counted
    }

    private mutating func count(_ run: Run) {
        guard run.last - run.start >= MovementEvaluation.shortestStill else { return }
        let from = run.start + MovementEvaluation.settleAllowance
        var previous: Zone??
        for (time, zone) in run.zones where time >= from {
            if let before = previous, before != zone { counted.changes += 1 }
            previous = .some(zone)
        }
        counted.seconds += run.last - from
    }
}
