import ArgumentParser
import BeaconFrames
import Foundation
import Ranging
import Traces

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Replay traces that carry truth_m and print distance, zone and interval accuracy, pooled by family.",
        discussion: """
        Each file is replayed three times: with Nearplay's model (the ranging options below), and with \
        two baselines on AltBeacon's 20 s trimmed running average: the AltBeacon library's Nexus 5 \
        curve, and log-distance n=2. Range events are taken at every sighting. Files are pooled by \
        family (the file name up to its first '-', see --group): a family's median is over all its \
        range events. The table ends with which goals hold on which family.
        """
    )

    enum Grouping: String, ExpressibleByArgument, CaseIterable {
        case family, file, all
    }

    @Argument(help: "Trace files with ground-truth distances (truth_m).")
    var files: [String]

    @Option(help: "How files are pooled: family (file name up to the first '-'), file, or all.")
    var group: Grouping = .family

    @Flag(help: "Print one JSON object per file and model (JSON Lines; with --calibrate-from also \"nearplay-calibrated\") instead of the pooled table.")
    var json = false

    @Option(help: ArgumentHelp("Also score a calibrated Nearplay: fit a site profile on FILE (a trace with truth_m at two or more distances), or with 'each', on two distances of each recording itself (the first half of its readings nearest 1 m and 3 m), scoring all on the rest.", valueName: "FILE|each"))
    var calibrateFrom: String?

    @Option(help: ArgumentHelp("With --calibrate-from: the shadowing assumed at each calibration spot, which sets how far the fit may move from the defaults (0: a plain least-squares fit).", valueName: "dB"))
    var spotShadowing: Double = 6

    @Option(help: ArgumentHelp("Write one SVG per recording into this folder: the estimate with its interval band, the baselines, the truth and the zones over time.", valueName: "dir"))
    var plot: String?

    @OptionGroup var ranging: RangingOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file with truth_m to evaluate.") }
        guard spotShadowing >= 0, spotShadowing <= 30 else { throw ValidationError("--spot-shadowing must be between 0 and 30 dB.") }
    }

    func run() throws {
        var input = TraceInput()
        let ours = ranging.configuration
        var fixedProfile: RangingProfile?
        if let source = calibrateFrom, source != "each" {
            guard let trace = input.read(source) else { try input.finish(offsets: [:]); return }
            do {
                fixedProfile = try Calibration.siteProfile(readings: CalibrationSplit.readings(trace.records), spotShadowing: spotShadowing)
            } catch {
                throw CommandFailure("\(source): \(error)")
            }
        }
        if let plot { try FileManager.default.createDirectory(atPath: plot, withIntermediateDirectories: true) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var pooled = PooledEvaluation(zones: ours.zones)
        var calibratedPool = PooledEvaluation(zones: ours.zones)
        for path in files {
            guard let trace = input.read(path) else { continue }
            guard trace.records.contains(where: { $0.truthDistance != nil }) else {
                Diagnostics.error("\(path): no line carries truth_m, so there is nothing to evaluate against")
                input.markBadData()
                continue
            }
            let family = switch group {
            case .family: PooledEvaluation.family(ofFile: path)
            case .file: (path as NSString).lastPathComponent
            case .all: "all"
            }
            // With a calibration from each recording, every model is scored on the held-out rest.
            var records = trace.records
            var profile = fixedProfile
            if calibrateFrom == "each" {
                let split = CalibrationSplit(records)
                do {
                    profile = try Calibration.siteProfile(readings: CalibrationSplit.readings(split.calibration), spotShadowing: spotShadowing)
                    records = split.rest
                } catch {
                    Diagnostics.warning("\(path): no two-point calibration (\(error)); scored uncalibrated only")
                }
            }
            var plotted = EvaluationPlot(title: (path as NSString).lastPathComponent)
            for model in EvaluatedModel.allCases {
                let (events, _) = Replay.run(records, configuration: model.configuration(ours: ours))
                pooled.add(events, model: model, family: family)
                if json {
                    var evaluation = Evaluation(zones: ours.zones)
                    for (event, truth) in events { evaluation.add(event, truth: truth) }
                    let body = String(decoding: try encoder.encode(evaluation.report(presence: trace.header.presence)), as: UTF8.self)
                    StandardOutput.line("{\"file\":\(quoted(path)),\"model\":\"\(model.rawValue)\",\"report\":\(body)}")
                }
                if plot != nil { draw(events, model: model, into: &plotted) }
            }
            if calibrateFrom != nil {
                // A recording whose calibration was refused is scored as a user would then range: uncalibrated.
                let nearplay = EvaluatedModel.nearplay.configuration(ours: ours)
                let (events, _) = Replay.run(records, configuration: profile.map { $0.applied(to: nearplay) } ?? nearplay)
                calibratedPool.add(events, model: .nearplay, family: family)
                if json {
                    var evaluation = Evaluation(zones: ours.zones)
                    for (event, truth) in events { evaluation.add(event, truth: truth) }
                    let body = String(decoding: try encoder.encode(evaluation.report()), as: UTF8.self)
                    StandardOutput.line("{\"file\":\(quoted(path)),\"model\":\"nearplay-calibrated\",\"report\":\(body)}")
                }
            }
            if let profile {
                if calibrateFrom == "each" {
                    Diagnostics.write("\((path as NSString).lastPathComponent): two-point profile at \(profile.distances.map { String(format: "%g m", $0) }.joined(separator: " and ")): offset \(String(format: "%+.1f", profile.rssiOffset)) dB, exponent \(String(format: "%.2f", profile.exponent))\n")
                }
            }
            if let plot {
                let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension + ".svg"
                try plotted.svg().write(toFile: (plot as NSString).appendingPathComponent(name), atomically: true, encoding: .utf8)
            }
        }
        if !json {
            let calibrated = calibrateFrom == nil ? nil : Dictionary(uniqueKeysWithValues: calibratedPool.rows().map { ($0.family, $0.nearplay) })
            if let profile = fixedProfile {
                StandardOutput.line(String(format: "Calibrated from %@: offset %+.1f dB, exponent %.2f, distances %@.", calibrateFrom ?? "",
                                           profile.rssiOffset, profile.exponent, profile.distances.map { String(format: "%g m", $0) }.joined(separator: ", ")))
            }
            for line in FamilyTable(rows: pooled.rows(), calibrated: calibrated).lines() { StandardOutput.line(line) }
        }
        try input.finish(offsets: ranging.configuration.receiverOffsets)
    }

    private func draw(_ events: [(ProximityEvent, Double?)], model: EvaluatedModel, into plot: inout EvaluationPlot) {
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

    private func quoted(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}

/// The pooled table `eval` prints (Markdown, so it pastes into the README), and its verdict.
struct FamilyTable {
    let rows: [FamilyRow]
    /// Per family, the calibrated Nearplay's figures, when a calibration was asked for.
    let calibrated: [String: EvaluationReport]?
    var goals = EvaluationGoals()

    func lines() -> [String] {
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
