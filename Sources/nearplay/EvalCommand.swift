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
        range events. The table ends with which goals hold on which family. With --walks it also \
        measures how the model follows movement: the settling time of a simulated walk (14 m to \
        1.5 m at 1.5 m/s, then standing) at 10 Hz and 1 Hz advertising, and the zone changes per \
        hour of beacons standing still, simulated and on the files' still segments.
        """
    )

    enum Grouping: String, ExpressibleByArgument, CaseIterable {
        case family, file, all
    }

    @Argument(help: "Trace files with ground-truth distances (truth_m).")
    var files: [String] = []

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

    @Flag(help: "Also measure how Nearplay follows movement: settling after a simulated walk (10 Hz and 1 Hz, five seeds) and zone changes per hour of standing, simulated and on the files' still segments. Files are optional with it.")
    var walks = false

    @OptionGroup var ranging: RangingOptions

    func validate() throws {
        guard !files.isEmpty || walks else { throw ValidationError("Name at least one trace file with truth_m to evaluate (or give --walks).") }
        guard !(walks && json) else { throw ValidationError("--walks prints tables; leave out --json.") }
        guard spotShadowing >= 0, spotShadowing <= 30 else { throw ValidationError("--spot-shadowing must be between 0 and 30 dB.") }
    }

    func run() throws {
        var input = TraceInput()
        var calibration = EvaluationRun.CalibrationSource.none
        if calibrateFrom == "each" {
            calibration = .eachRecording(spotShadowing: spotShadowing)
        } else if let source = calibrateFrom {
            guard let trace = input.read(source) else { try input.finish(offsets: [:]); return }
            do {
                calibration = .profile(try EvaluationRun.profile(fittedOn: trace.records, spotShadowing: spotShadowing))
            } catch {
                throw CommandFailure("\(source): \(error)")
            }
        }
        if let plot { try FileManager.default.createDirectory(atPath: plot, withIntermediateDirectories: true) }
        var evaluation = EvaluationRun(configuration: ranging.configuration, calibration: calibration,
                                       reportsPerRecording: json, plots: plot != nil, countsStillSegments: walks)
        for path in files {
            guard let trace = input.read(path) else { continue }
            let name = (path as NSString).lastPathComponent
            let family = switch group {
            case .family: PooledEvaluation.family(ofFile: path)
            case .file: name
            case .all: "all"
            }
            guard let recording = evaluation.add(trace.records, presence: trace.header.presence, title: name, family: family) else {
                Diagnostics.error("\(path): no line carries truth_m, so there is nothing to evaluate against")
                input.markBadData()
                continue
            }
            if let refused = recording.calibrationRefused {
                Diagnostics.warning("\(path): no two-point calibration (\(refused)); scored uncalibrated only")
            }
            for report in recording.reports { StandardOutput.line(try report.jsonLine(file: path)) }
            if let profile = recording.profile {
                Diagnostics.write("\(name): two-point profile at \(profile.distances.map(DistanceText.measured).joined(separator: " and ")): offset \(String(format: "%+.1f", profile.rssiOffset)) dB, exponent \(String(format: "%.2f", profile.exponent))\n")
            }
            if let plot, let plotted = recording.plot {
                let file = (name as NSString).deletingPathExtension + ".svg"
                try plotted.svg().write(toFile: (plot as NSString).appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        if !json {
            if case .profile(let profile) = calibration {
                StandardOutput.line(String(format: "Calibrated from %@: offset %+.1f dB, exponent %.2f, distances %@.", calibrateFrom ?? "",
                                           profile.rssiOffset, profile.exponent, profile.distances.map(DistanceText.measured).joined(separator: ", ")))
            }
            if !files.isEmpty {
                for line in evaluation.table().lines() { StandardOutput.line(line) }
                StandardOutput.line("")
                for line in evaluation.intervalBandLines() { StandardOutput.line(line) }
            }
        }
        if walks {
            let results = [0.1, 1].map { MovementEvaluation.simulate(configuration: ranging.configuration, interval: $0) }
            if !files.isEmpty { StandardOutput.line("") }
            for line in MovementEvaluation.lines(results) { StandardOutput.line(line) }
            if !files.isEmpty {
                StandardOutput.line("")
                for line in evaluation.stillSegmentLines() { StandardOutput.line(line) }
            }
        }
        try input.finish(offsets: ranging.configuration.receiverOffsets)
    }
}
