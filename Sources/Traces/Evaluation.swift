import Ranging

/// Accuracy and presence metrics over a replay of a trace with ground truth.
public struct Evaluation: Sendable {
    /// Distance bands the error is broken down by (truth, metres): [0,1), [1,2), [2,3), [3,5), [5,∞).
    public static let bandLimits: [Double] = [1, 2, 3, 5]

    private var errors: [Double] = []
    private var bandErrors: [[Double]] = Array(repeating: [], count: bandLimits.count + 1)
    private var zoneHits = 0
    private var zoneCount = 0
    private var rangeEvents = 0
    private var intervalHits = 0
    private var intervalCount = 0
    private var events: [ProximityEvent] = []
    private let zones: ZoneBoundaries
    /// Per ``IntervalBand/limits`` band: the range events with truth and an interval.
    public private(set) var intervalBands = IntervalBand.empty

    public init(zones: ZoneBoundaries = ZoneBoundaries()) { self.zones = zones }

    public mutating func add(_ event: ProximityEvent, truth: Double?) {
        switch event.kind {
        case .enter, .exit:
            events.append(event)
        case .range:
            rangeEvents += 1
            guard let truth else { return }
            zoneCount += 1
            if event.zone == Zone.of(distance: truth, boundaries: zones) { zoneHits += 1 }
            guard let distance = event.distance else { return }
            if let interval = event.distanceInterval {
                intervalCount += 1
                if interval.contains(truth) { intervalHits += 1 }
                intervalBands[IntervalBand.index(truth: truth)].add(interval, truth: truth)
            }
            let error = abs(distance - truth)
            errors.append(error)
            bandErrors[Self.bandLimits.firstIndex { truth < $0 } ?? Self.bandLimits.count].append(error)
        }
    }

    public func report(presence: [PresenceWindow] = []) -> EvaluationReport {
        var report = EvaluationReport()
        report.rangeEvents = rangeEvents
        report.rangeEventsWithTruth = zoneCount
        report.meanAbsoluteError = errors.isEmpty ? nil : errors.reduce(0, +) / Double(errors.count)
        report.medianAbsoluteError = Calibration.median(errors)
        report.zoneAccuracy = zoneCount == 0 ? nil : Double(zoneHits) / Double(zoneCount)
        report.intervalCoverage = intervalCount == 0 ? nil : Double(intervalHits) / Double(intervalCount)
        var lower = 0.0
        for (i, errors) in bandErrors.enumerated() {
            let upper = i < Self.bandLimits.count ? Self.bandLimits[i] : nil
            report.bands.append(.init(from: lower, to: upper, count: errors.count,
                                      medianAbsoluteError: Calibration.median(errors),
                                      meanAbsoluteError: errors.isEmpty ? nil : errors.reduce(0, +) / Double(errors.count)))
            lower = upper ?? lower
        }
        report.enters = events.filter { $0.kind == .enter }.count
        report.exits = events.filter { $0.kind == .exit }.count
        if !presence.isEmpty { report.presence = presenceMetrics(presence) }
        return report
    }

    /// Enter latency (first enter after a window opens), exit latency (the exit that ends the
    /// window, against its end), and false exits (exits followed by a re-enter within the window).
    private func presenceMetrics(_ windows: [PresenceWindow]) -> EvaluationReport.Presence {
        var result = EvaluationReport.Presence()
        var enterLatencies: [Double] = [], exitLatencies: [Double] = []
        for window in windows {
            // This window's events: from its start to the start of the beacon's next window.
            let nextStart = windows.filter { $0.beacon == window.beacon && $0.start > window.start }.map(\.start).min() ?? .infinity
            let mine = events.filter { $0.identity.description == window.beacon && $0.time >= window.start && $0.time < nextStart }
            if let enter = mine.first(where: { $0.kind == .enter && $0.time <= window.end }) {
                enterLatencies.append(enter.time - window.start)
            } else {
                result.missedWindows += 1
            }
            var sawExit = false
            for event in mine {
                if event.kind == .exit { sawExit = true; continue }
                if event.kind == .enter, sawExit, event.time <= window.end { result.falseExits += 1; sawExit = false }
            }
            if let finalExit = mine.last(where: { $0.kind == .exit }) { exitLatencies.append(finalExit.time - window.end) }
        }
        result.meanEnterLatency = enterLatencies.isEmpty ? nil : enterLatencies.reduce(0, +) / Double(enterLatencies.count)
        result.maxEnterLatency = enterLatencies.max()
        result.meanExitLatency = exitLatencies.isEmpty ? nil : exitLatencies.reduce(0, +) / Double(exitLatencies.count)
        result.maxExitLatency = exitLatencies.max()
        return result
    }
}

/// How often the interval held the truth among range events whose truth lies in one distance
/// band, and how wide it was there: kept apart from ``EvaluationReport`` so that `eval --json`
/// prints what it always printed.
public struct IntervalBand: Sendable, Hashable {
    /// Band limits (truth, metres): [0,1), [1,2), [2,4), [4,8), [8,16), [16,∞). Doubling
    /// bands, because the interval's width is a ratio and the exponent's share grows with log distance.
    public static let limits: [Double] = [1, 2, 4, 8, 16]
    /// One empty band per limit, and one beyond the last.
    public static let empty = limits.indices.map { IntervalBand(index: $0) } + [IntervalBand(index: limits.count)]

    /// The band's lower limit (m).
    public let from: Double
    /// The band's upper limit (m), nil for the last.
    public let to: Double?
    /// Range events with truth and an interval.
    public private(set) var count = 0
    /// Those whose interval held the truth.
    public private(set) var hits = 0
    /// Each interval's upper end over its lower end.
    public private(set) var widthRatios: [Double] = []

    private init(index: Int) {
        from = index == 0 ? 0 : Self.limits[index - 1]
        to = index < Self.limits.count ? Self.limits[index] : nil
    }

    /// The band a true distance falls in.
    public static func index(truth: Double) -> Int { limits.firstIndex { truth < $0 } ?? limits.count }

    public var coverage: Double? { count == 0 ? nil : Double(hits) / Double(count) }
    public var medianWidthRatio: Double? { Calibration.median(widthRatios) }

    mutating func add(_ interval: ClosedRange<Double>, truth: Double) {
        count += 1
        if interval.contains(truth) { hits += 1 }
        if interval.lowerBound > 0 { widthRatios.append(interval.upperBound / interval.lowerBound) }
    }

    /// This band with `other`'s events added (the same band of another evaluation).
    public mutating func merge(_ other: IntervalBand) {
        count += other.count
        hits += other.hits
        widthRatios += other.widthRatios
    }

    /// "1–2 m", "<1 m", "≥16 m".
    public var label: String {
        switch (from, to) {
        case (0, let to?): String(format: "<%g m", to)
        case (let from, let to?): String(format: "%g–%g m", from, to)
        case (let from, nil): String(format: "≥%g m", from)
        }
    }
}

/// The figures of one evaluation. Distances in metres, latencies in seconds.
public struct EvaluationReport: Sendable, Hashable, Codable {
    public struct Band: Sendable, Hashable, Codable {
        public var from: Double
        public var to: Double?
        public var count: Int
        public var medianAbsoluteError: Double?
        public var meanAbsoluteError: Double?
    }

    public struct Presence: Sendable, Hashable, Codable {
        public var meanEnterLatency: Double?
        public var maxEnterLatency: Double?
        public var meanExitLatency: Double?
        public var maxExitLatency: Double?
        public var falseExits = 0
        public var missedWindows = 0
    }

    public var rangeEvents = 0
    public var rangeEventsWithTruth = 0
    public var meanAbsoluteError: Double?
    public var medianAbsoluteError: Double?
    public var zoneAccuracy: Double?
    /// The fraction of range events with truth and an interval whose interval held the truth.
    public var intervalCoverage: Double?
    public var bands: [Band] = []
    public var enters = 0
    public var exits = 0
    public var presence: Presence?
}
