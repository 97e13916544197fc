import Foundation
import Ranging
import SystemSupport

/// What `nearplay eval` does with the recordings it is given, without the terminal: each
/// recording replayed under every ``EvaluatedModel`` (and, when a calibration is asked for, under
/// a calibrated Nearplay), pooled by family into the ``FamilyTable``.
///
/// The command reads the files and prints; this holds the rules, so a test or another tool gets
/// the same figures from the same records.
public struct EvaluationRun: Sendable {
    /// Where a calibrated Nearplay's site profile comes from.
    public enum CalibrationSource: Sendable, Hashable {
        /// No calibrated Nearplay is scored.
        case none
        /// One profile for every recording (`--calibrate-from FILE`: fitted by ``profile(fittedOn:spotShadowing:)``).
        case profile(RangingProfile)
        /// A two-point profile from each recording itself (``CalibrationSplit``), every model then
        /// scored on the held-out rest (`--calibrate-from each`).
        case eachRecording(spotShadowing: Double)
    }

    /// One model's figures on one recording, as `eval --json` prints them.
    public struct ModelReport: Sendable, Hashable {
        /// An ``EvaluatedModel`` raw value, or `nearplay-calibrated`.
        public var model: String
        public var report: EvaluationReport

        /// `{"file":…,"model":…,"report":{…}}`: the line `eval --json` prints for this report.
        public func jsonLine(file: String) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let body = String(decoding: try encoder.encode(report), as: UTF8.self)
            // Strings as JSONEncoder writes them (slashes escaped), as they always were.
            var json = JSONWriter(escaping: .likeJSONEncoder)
            json.object { json in
                json.member("file", file)
                json.member("model", model)
                json.key("report")
                json.raw(body)
            }
            return json.text
        }
    }

    /// What one recording gave, beyond what went into the pools.
    public struct Recording: Sendable {
        /// Per model, in the order `eval --json` prints them (only when ``reportsPerRecording``).
        public var reports: [ModelReport] = []
        /// With ``CalibrationSource/eachRecording(spotShadowing:)``: the recording's own
        /// two-point profile, or why it could not be fitted (the recording is then scored
        /// uncalibrated, as a user would then range).
        public var profile: RangingProfile?
        public var calibrationRefused: CalibrationError?
        /// The recording's plot (only when ``plots``).
        public var plot: EvaluationPlot?
    }

    public let configuration: RangingConfiguration
    public let calibration: CalibrationSource
    /// Whether ``add(_:presence:title:family:)`` gives each model's report on the recording.
    public let reportsPerRecording: Bool
    /// Whether ``add(_:presence:title:family:)`` draws the recording's plot.
    public let plots: Bool
    public private(set) var pooled: PooledEvaluation
    /// The calibrated Nearplay's figures, pooled the same way.
    public private(set) var calibratedPool: PooledEvaluation
    /// Whether ``add(_:presence:title:family:)`` counts Nearplay's zone changes on the
    /// recording's still segments (``StillSegments``), into ``stillSegments``.
    public let countsStillSegments: Bool
    /// Per family, in the order families were first added: Nearplay's zone changes on still segments.
    public private(set) var stillSegments: [(family: String, count: ZoneChangeCount)] = []

    /// `configuration` is Nearplay's (the command's ranging options); the baselines take only
    /// its presence settings.
    public init(configuration: RangingConfiguration, calibration: CalibrationSource = .none,
                reportsPerRecording: Bool = false, plots: Bool = false, countsStillSegments: Bool = false) {
        self.configuration = configuration
        self.countsStillSegments = countsStillSegments
        self.calibration = calibration
        self.reportsPerRecording = reportsPerRecording
        self.plots = plots
        pooled = PooledEvaluation(zones: configuration.zones)
        calibratedPool = PooledEvaluation(zones: configuration.zones)
    }

    /// The site profile `--calibrate-from FILE` fits on a recording's lines with truth_m: the
    /// same readings and prior as `calibrate ranging` (see ``CalibrationSplit/readings(_:at:of:)``).
    public static func profile(fittedOn records: [TraceRecord], spotShadowing: Double) throws(CalibrationError) -> RangingProfile {
        try Calibration.siteProfile(readings: CalibrationSplit.readings(records), spotShadowing: spotShadowing)
    }

    /// Replays one recording under every model and adds it to `family`; nil, and nothing added,
    /// when no line carries truth_m (there is nothing to evaluate against).
    public mutating func add(_ records: [TraceRecord], presence: [PresenceWindow] = [], title: String,
                             family: String) -> Recording? {
        guard records.contains(where: { $0.truthDistance != nil }) else { return nil }
        var result = Recording()
        // With a calibration from each recording, every model is scored on the held-out rest.
        var scored = records
        var profile: RangingProfile?
        switch calibration {
        case .none:
            break
        case .profile(let fixed):
            profile = fixed
        case .eachRecording(let spotShadowing):
            let split = CalibrationSplit(records)
            do {
                profile = try Self.profile(fittedOn: split.calibration, spotShadowing: spotShadowing)
                scored = split.rest
                result.profile = profile
            } catch {
                result.calibrationRefused = error
            }
        }
        var plot = EvaluationPlot(title: title)
        for model in EvaluatedModel.allCases {
            let (events, _) = Replay.run(scored, configuration: model.configuration(ours: configuration))
            pooled.add(events, model: model, family: family)
            if reportsPerRecording {
                result.reports.append(ModelReport(model: model.rawValue, report: report(events, presence: presence)))
            }
            if plots { Self.draw(events, model: model, into: &plot) }
            if countsStillSegments, model == .nearplay {
                var segments = StillSegments()
                for (event, truth) in events { segments.add(event, truth: truth) }
                let count = segments.finish()
                if let index = stillSegments.firstIndex(where: { $0.family == family }) {
                    stillSegments[index].count.add(count)
                } else {
                    stillSegments.append((family, count))
                }
            }
        }
        if calibration != .none {
            // A recording whose calibration was refused is scored as a user would then range: uncalibrated.
            let nearplay = EvaluatedModel.nearplay.configuration(ours: configuration)
            let (events, _) = Replay.run(scored, configuration: profile.map { $0.applied(to: nearplay) } ?? nearplay)
            calibratedPool.add(events, model: .nearplay, family: family)
            if reportsPerRecording {
                result.reports.append(ModelReport(model: "nearplay-calibrated", report: report(events)))
            }
        }
        if plots { result.plot = plot }
        return result
    }

    /// The pooled table and its verdict; with a calibration, the calibrated Nearplay's columns.
    public func table() -> FamilyTable {
        let calibrated = calibration == .none ? nil
            : Dictionary(uniqueKeysWithValues: calibratedPool.rows().map { ($0.family, $0.nearplay) })
        return FamilyTable(rows: pooled.rows(), calibrated: calibrated)
    }

    /// The table `eval` prints after the family table: Nearplay's interval coverage by band of
    /// true distance, pooled over all families, with its median width (upper end over lower end)
    /// and each family's coverage in the band.
    public func intervalBandLines() -> [String] {
        let (all, families) = pooled.intervalBands()
        func percent(_ value: Double?) -> String { value.map { String(format: "%.0f %%", $0 * 100) } ?? "-" }
        var lines = [
            "Interval coverage by true distance (Nearplay, all families pooled; hi/lo: the interval's upper end over its lower end):",
            "",
            "| band | ranges | coverage | median hi/lo |" + families.map { " \($0.family) |" }.joined(),
            "|---|---:|---:|---:|" + String(repeating: "---:|", count: families.count),
        ]
        for (index, band) in all.enumerated() where band.count > 0 {
            lines.append("| \(band.label) | \(band.count) | \(percent(band.coverage)) | "
                + (band.medianWidthRatio.map { String(format: "%.2f", $0) } ?? "-") + " |"
                + families.map { family in
                    let mine = family.bands[index]
                    return mine.count == 0 ? " - |" : " \(percent(mine.coverage)) (\(mine.count)) |"
                }.joined())
        }
        return lines
    }

    /// The lines `eval --walks` prints for the recordings: Nearplay's zone changes per hour on
    /// their still segments, per family and over all.
    public func stillSegmentLines() -> [String] {
        var lines = [
            String(format: "Zone changes on the recordings' still segments (truth unchanged for %g s or more, counted from %g s in):",
                   MovementEvaluation.shortestStill, MovementEvaluation.settleAllowance),
            "",
            "| family | still hours | zone changes | per hour |",
            "|---|---:|---:|---:|",
        ]
        func row(_ name: String, _ count: ZoneChangeCount) -> String {
            "| \(name) | " + String(format: "%.2f | %d | ", count.hours, count.changes)
                + (count.perHour.map { String(format: "%.1f", $0) } ?? "-") + " |"
        }
        var all = ZoneChangeCount()
        for (family, count) in stillSegments {
            all.add(count)
            lines.append(row(family, count))
        }
        lines.append(row("all", all))
        return lines
    }

    private func report(_ events: [(ProximityEvent, Double?)], presence: [PresenceWindow] = []) -> EvaluationReport {
        var evaluation = Evaluation(zones: configuration.zones)
        for (event, truth) in events { evaluation.add(event, truth: truth) }
        return evaluation.report(presence: presence)
    }

    /// Nearplay's estimates with their interval and the truth, or a baseline's estimates.
    private static func draw(_ events: [(ProximityEvent, Double?)], model: EvaluatedModel, into plot: inout EvaluationPlot) {
        let ranges = events.filter { $0.0.kind == .range && $0.0.distance != nil }
        switch model {
        case .nearplay:
            plot.estimates = ranges.map { ($0.0.time, $0.0.distance!, $0.0.distanceInterval) }
            plot.truth = ranges.compactMap { event, truth in truth.map { EvaluationPlot.Point(time: event.time, distance: $0) } }
        case .altBeacon, .logDistance2:
            plot.baselines.append((model == .altBeacon ? "AltBeacon curve" : "log-distance n=2",
                                   ranges.map { EvaluationPlot.Point(time: $0.0.time, distance: $0.0.distance!) }))
        }
    }
}

/// The pooled table `eval` prints (Markdown, so it pastes into the README), and its verdict.
public struct FamilyTable: Sendable {
    public let rows: [FamilyRow]
    /// Per family, the calibrated Nearplay's figures, when a calibration was asked for.
    public let calibrated: [String: EvaluationReport]?
    public var goals = EvaluationGoals()

    public init(rows: [FamilyRow], calibrated: [String: EvaluationReport]? = nil, goals: EvaluationGoals = EvaluationGoals()) {
        self.rows = rows
        self.calibrated = calibrated
        self.goals = goals
    }

    public func lines() -> [String] {
        func metres(_ value: Double?) -> String { value.map { String(format: "%.2f m", $0) } ?? "-" }
        func percent(_ value: Double?) -> String { value.map { String(format: "%.0f %%", $0 * 100) } ?? "-" }
        var header = "| family | files | ranges | Nearplay | AltBeacon curve | log-distance n=2 | × curve | zone (Nearplay / curve / n=2) | interval coverage |"
        var rule = "|---|---:|---:|---:|---:|---:|---:|---|---:|"
        if calibrated != nil {
            header += " calibrated Nearplay | calibrated zone | calibrated coverage |"
            rule += "---:|---:|---:|"
        }
        var lines = [header, rule]
        for row in rows {
            var line = "| \(row.family) | \(row.files) | \(row.nearplay.rangeEventsWithTruth) | \(metres(row.nearplay.medianAbsoluteError))"
                + " | \(metres(row.altBeacon.medianAbsoluteError)) | \(metres(row.logDistance.medianAbsoluteError))"
                + " | \(row.ratioToCurve.map { String(format: "%.2f", $0) } ?? "-")"
                + " | \(percent(row.nearplay.zoneAccuracy)) / \(percent(row.altBeacon.zoneAccuracy)) / \(percent(row.logDistance.zoneAccuracy))"
                + " | \(percent(row.nearplay.intervalCoverage)) |"
            if let calibrated {
                let report = calibrated[row.family]
                line += " \(metres(report?.medianAbsoluteError)) | \(percent(report?.zoneAccuracy)) | \(percent(report?.intervalCoverage)) |"
            }
            lines.append(line)
        }
        lines.append("")
        let verdicts = rows.map { ($0.family, goals.verdict($0)) }
        func holds(_ goal: String, _ keyPath: KeyPath<FamilyVerdict, Bool>) -> String {
            let yes = verdicts.filter { $0.1[keyPath: keyPath] }.map(\.0), no = verdicts.filter { !$0.1[keyPath: keyPath] }.map(\.0)
            let met = yes.isEmpty ? "on no family" : no.isEmpty ? "on every family" : "on " + yes.joined(separator: ", ")
            return "- \(goal): holds \(met)" + (no.isEmpty || yes.isEmpty ? "" : " (not on \(no.joined(separator: ", ")))")
        }
        lines.append("Goals (\(verdicts.count) famil\(verdicts.count == 1 ? "y" : "ies")):")
        lines.append(holds("median error below both baselines", \.belowBothBaselines))
        lines.append(holds(String(format: "median error at most %.2f× the AltBeacon curve's", goals.medianRatioToCurve), \.withinRatioOfCurve))
        lines.append(holds(String(format: "zone accuracy at least %.0f %%", goals.zoneAccuracy * 100), \.zoneAccuracy))
        lines.append(holds(String(format: "interval coverage within %.0f ± %.0f %%", goals.coverage * 100, goals.coverageTolerance * 100), \.coverage))
        // One family's spread says little about another's: across families, the interval's
        // promise is kept on average.
        let coverages = rows.compactMap(\.nearplay.intervalCoverage)
        if coverages.count > 1 {
            lines.append(String(format: "  (averaged over the %d families, each weighted alike, the interval holds the truth %.0f %% of the time)",
                                coverages.count, coverages.reduce(0, +) / Double(coverages.count) * 100))
        }
        return lines
    }
}
