import ArgumentParser
import Ranging
import Traces

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay trace files (trace v1 or btsnoop) and print the proximity events.",
        discussion: """
        Bad lines are reported on standard error with their line number and skipped; the command \
        then exits 65 (66 when a file is missing). Several files are replayed one after the other, \
        each from its own start.
        """
    )

    @Argument(help: "Trace files: Nearplay trace v1 (.jsonl) or btsnoop captures (btmon -w, Android).")
    var files: [String]

    @Flag(help: "Write events as JSON Lines (the event format of DESIGN.md) instead of a table.")
    var json = false

    @OptionGroup var ranging: RangingOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file to replay.") }
    }

    func run() throws {
        var input = TraceInput()
        let table = EventTable()
        if !json { StandardOutput.line(table.header) }
        for path in files {
            guard let trace = input.read(path) else { continue }
            var replay = Replay(configuration: ranging.configuration)
            let emit: (ProximityEvent, Double?) -> Void = { event, truth in
                StandardOutput.line(json ? EventFormat.json(event, truthDistance: truth) : table.row(event, truth: truth))
            }
            for record in trace.records { replay.feed(record, emit: emit) }
            replay.finish(emit: emit)
            if replay.summary.sightings == 0 {
                Diagnostics.warning("\(path): none of its \(replay.summary.advertisements) advertisements is an iBeacon, AltBeacon or Eddystone-UID frame")
            }
            if replay.summary.droppedReadings > 0 {
                Diagnostics.warning("\(path): dropped \(replay.summary.droppedReadings) impossible RSSI readings (≥ 0 dBm, below -127 dBm or unavailable)")
            }
        }
        try input.finish(offsets: ranging.configuration.receiverOffsets)
    }
}

/// The readable table `replay` prints.
struct EventTable {
    let header = pad("t", 9) + "  " + pad("event", 5) + "  " + pad("beacon", 48) + "  " + pad("address", 17)
        + "  " + pad("rssi", 4, right: true) + "  " + pad("filt", 6, right: true) + "  " + pad("distance (68 %)", 19, right: true)
        + "  " + pad("zone", 9) + "  truth m"

    func row(_ event: ProximityEvent, truth: Double?) -> String {
        func number(_ value: Double?, _ decimals: Int) -> String {
            value.map { String(format: "%.\(decimals)f", $0) } ?? "-"
        }
        var line = pad(String(format: "%.3f", event.time), 9, right: true) + "  " + pad(event.kind.rawValue, 5)
            + "  " + pad(event.identity.description, 48) + "  " + pad(event.address.description, 17)
        if event.kind != .exit {
            line += "  " + pad(event.rssi.map(String.init) ?? "-", 4, right: true)
        }
        if event.kind == .range {
            line += "  " + pad(number(event.filteredRSSI, 1), 6, right: true) + "  " + pad(distanceText(event.distance, event.distanceInterval), 19, right: true)
                + "  " + pad((event.zone ?? .unknown).rawValue, 9) + "  " + number(truth, 2)
        }
        return line
    }
}

/// A distance as the terminal views show it, with its interval: "2.1 m (1.4–3.2)", whole metres
/// from 10 m on; "-" when unknown.
func distanceText(_ distance: Double?, _ interval: ClosedRange<Double>?) -> String {
    distance.map { DistanceText.estimate($0, interval: interval, wholeMetresFrom: 10) } ?? "-"
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    guard text.count < width else { return text }
    let fill = String(repeating: " ", count: width - text.count)
    return right ? fill + text : text + fill
}
