import ArgumentParser
import BeaconFrames
import Foundation
import Radio
import Traces

struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record everything scanned through BlueZ (or raw HCI) to a trace file (trace v1), until interrupted.",
        discussion: """
        Every advertisement BlueZ reports, beacon or not, with its RSSI and advertising data, so it \
        can be replayed with `nearplay replay`. BlueZ rebuilds advertising data from what it parsed \
        (flags, manufacturer and service data, other AD types); for the exact bytes on the air, \
        record with --backend hci (the controller's reports as received, duplicates and all) or \
        `btmon -w FILE` (see hardware-notes.md).
        """
    )

    @Argument(help: "The trace file to write (- for standard output).")
    var file: String

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @OptionGroup var scanning: ScannerOptions<RecordCommand>

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds.") }
    }

    func run() async throws {
        scanning.radio.bootstrapLogging()
        let output: FileHandle
        if file == "-" {
            output = .standardOutput
        } else {
            let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno)).lowercased()
                Diagnostics.error("cannot create the trace file \(file) (\(reason)): create its folder or make it writable, "
                                  + "or give another path (- writes the trace to standard output).")
                throw Diagnostics.cannotCreate
            }
            output = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        }
        let selection = scanning.selection
        let source = "nearplay record (\(selection.description))"
        let writer = LineWriter(output)
        writer.write(TraceWriter.header(source: source))
        let scanner = selection.makeScanner()
        let duration = self.duration
        do {
            try await runUntilInterrupted {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await scanner.scan { advertisement in
                            if let line = TraceWriter.line(advertisement) { writer.write(line) }
                        }
                    }
                    if let duration {
                        group.addTask { try await Task.sleep(for: .seconds(duration)) }
                    }
                    // Whichever ends first (the time limit, or the scan) ends the recording.
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {
        } catch {
            writer.close()
            throw RadioFailure.report(error)
        }
        writer.close()
        if file != "-" {
            Diagnostics.write("Recorded \(writer.lines - 1) advertisements to \(file).\n")
        }
    }
}

extension RecordCommand: RSSIThresholdHelp {
    static let rssiThresholdHelp = "Ignore advertisements weaker than this, in dBm (-127 to 20)."
}

/// Writes lines to a file handle, each one complete, from whichever task calls.
final class LineWriter: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    private(set) var lines = 0

    init(_ handle: FileHandle) { self.handle = handle }

    func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        handle.write(Data((line + "\n").utf8))
        lines += 1
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        if handle !== FileHandle.standardOutput { try? handle.close() }
    }
}
