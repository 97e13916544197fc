import BeaconFrames
import Foundation
import Traces

/// Reads trace files for a command: reports every bad line on standard error and remembers what
/// went wrong, so the command can do what it can and then exit with the right status.
struct TraceInput {
    private(set) var hadBadData = false
    private(set) var hadMissingInput = false
    private(set) var receiversSeen: Set<Receiver> = []

    mutating func read(_ path: String) -> TraceReader.Trace? {
        guard FileManager.default.isReadableFile(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            Diagnostics.error("\(path): \(exists ? "cannot be read: check its permissions" : "no such file")")
            hadMissingInput = true
            return nil
        }
        do {
            let result = try TraceReader.read(path: path)
            for issue in result.issues {
                Diagnostics.write("\(issue)\n")
            }
            if !result.issues.isEmpty {
                hadBadData = true
                Diagnostics.warning("\(path): skipped \(result.issues.count) bad line\(result.issues.count == 1 ? "" : "s"), kept \(result.records.count)")
            }
            for record in result.records {
                if let receiver = record.advertisement.receiver { receiversSeen.insert(receiver) }
            }
            return result
        } catch {
            Diagnostics.error("\(error)")
            hadBadData = true
            return nil
        }
    }

    /// Notes bad data found by the command itself (e.g. a trace without truth for `eval`).
    mutating func markBadData() { hadBadData = true }

    /// Warns about `--rssi-offset RX=DB` for receivers no trace named, then throws the exit
    /// status for what went wrong: 66 when an input was missing, 65 when one held bad data.
    func finish(offsets: [Receiver: Double]) throws {
        for receiver in offsets.keys.sorted(by: { $0.name < $1.name }) where !receiversSeen.contains(receiver) {
            Diagnostics.warning("--rssi-offset \(receiver.name)=…: no trace line names the receiver \"\(receiver.name)\" (its \"rx\"), so that offset was not used")
        }
        if hadMissingInput { throw Diagnostics.noInput }
        if hadBadData { throw Diagnostics.dataError }
    }
}
