import ArgumentParser
import BeaconFrames
import Foundation
import Ranging
import Traces

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Replay traces that carry truth_m and print distance and zone accuracy.",
        discussion: """
        Each file is replayed three times: with Nearplay's model (the ranging options below), with \
        the AltBeacon library's approach (Nexus 5 curve on a 20 s trimmed running average), and with \
        plain log-distance n=2 on unfiltered readings. Range events are taken at every sighting.
        """
    )

    @Argument(help: "Trace files with ground-truth distances (truth_m).")
    var files: [String]

    @Flag(help: "Print the results as one JSON object per file and model (JSON Lines).")
    var json = false

    @OptionGroup var ranging: RangingOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file with truth_m to evaluate.") }
    }

    /// The three models compared, by name.
    func models() -> [(name: String, configuration: RangingConfiguration)] {
        var ours = ranging.configuration
        ours.rangeInterval = 0
        return [
            ("nearplay", ours),
            ("altbeacon", RangingConfiguration(filter: .altBeaconRunningAverage, distanceModel: .altBeaconCurve(.nexus5),
                                               presence: ours.presence)),
            ("log-distance-n2", RangingConfiguration(filter: .arma(coefficient: 1), distanceModel: .logDistance(exponent: 2),
                                                     presence: ours.presence)),
        ]
    }

    func run() throws {
        var input = TraceInput()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if !json {
            StandardOutput.line(pad("file", 28) + "  " + pad("model", 16) + "  " + pad("ranges", 7, right: true)
                + "  " + pad("median m", 8, right: true) + "  " + pad("mean m", 7, right: true)
                + "  " + pad("zone %", 6, right: true) + "  " + pad("enter", 5, right: true) + "  " + pad("exit", 5, right: true)
                + "  median by truth band (m): " + bandLabels())
        }
        for path in files {
            guard let trace = input.read(path) else { continue }
            guard trace.records.contains(where: { $0.truthDistance != nil }) else {
                Diagnostics.error("\(path): no line carries truth_m, so there is nothing to evaluate against")
                input.markBadData()
                continue
            }
            if !json, let exponent = fittedExponent(trace.records) {
                Diagnostics.write("\((path as NSString).lastPathComponent): the recording's own path-loss exponent (fitted to median RSSI by distance) is \(String(format: "%.2f", exponent))\n")
            }
            for (name, configuration) in models() {
                let (events, _) = Replay.run(trace.records, configuration: configuration)
                var evaluation = Evaluation(zones: configuration.zones)
                for (event, truth) in events { evaluation.add(event, truth: truth) }
                let report = evaluation.report(presence: trace.header.presence)
                if json {
                    let body = String(decoding: try encoder.encode(report), as: UTF8.self)
                    StandardOutput.line("{\"file\":\(quoted(path)),\"model\":\"\(name)\",\"report\":\(body)}")
                } else {
                    StandardOutput.line(row(file: path, model: name, report))
                }
            }
        }
        try input.finish(offsets: ranging.configuration.receiverOffsets)
    }

    private func row(file: String, model: String, _ r: EvaluationReport) -> String {
        func f(_ v: Double?, _ d: Int) -> String { v.map { String(format: "%.\(d)f", $0) } ?? "-" }
        var line = pad((file as NSString).lastPathComponent, 28) + "  " + pad(model, 16)
            + "  " + pad("\(r.rangeEventsWithTruth)", 7, right: true) + "  " + pad(f(r.medianAbsoluteError, 3), 8, right: true)
            + "  " + pad(f(r.meanAbsoluteError, 3), 7, right: true) + "  " + pad(f(r.zoneAccuracy.map { $0 * 100 }, 1), 6, right: true)
            + "  " + pad("\(r.enters)", 5, right: true) + "  " + pad("\(r.exits)", 5, right: true)
        line += "  " + r.bands.map { band in band.count == 0 ? "-" : f(band.medianAbsoluteError, 2) }.joined(separator: " ")
        if let p = r.presence {
            line += String(format: "  enter latency %@ s, exit latency %@ s, false exits %d",
                           f(p.meanEnterLatency, 2), f(p.meanExitLatency, 2), p.falseExits)
        }
        return line
    }

    private func bandLabels() -> String {
        var lower = 0.0
        var labels: [String] = []
        for limit in Evaluation.bandLimits {
            labels.append("\(Int(lower))-\(Int(limit))")
            lower = limit
        }
        return (labels + ["\(Int(lower))+"]).joined(separator: " ")
    }

    /// The exponent the recording itself suggests, from readings with truth and a measured power.
    private func fittedExponent(_ records: [TraceRecord]) -> Double? {
        let losses = records.compactMap { record -> (distance: Double, loss: Double)? in
            guard let truth = record.truthDistance, let sighting = Sighting(record.advertisement),
                  let power = sighting.measuredPower, let rssi = sighting.rssi else { return nil }
            return (truth, Double(power - rssi))
        }
        return Calibration.pathLossExponent(losses: losses)
    }

    private func quoted(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}
