import ArgumentParser
import Foundation
import Rounds
import Sensors
import Synchronization

/// `nearplay sensors`: what sensors there are, and their live readings.
struct SensorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "List the accelerometers and microphone found and show live readings until interrupted.",
        discussion: "With --json, streams one JSON object per sample instead: {\"sensor\":\"accel\",\"t\":…,\"x\":…,\"y\":…,\"z\":…} in m/s² and {\"sensor\":\"mic\",\"t\":…,\"rms_dbfs\":…,\"peak_dbfs\":…,\"overruns\":…}."
    )

    @OptionGroup var sensors: SensorOptions

    @Flag(help: "Stream samples as JSON Lines on standard output.")
    var json = false

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until interrupted).", valueName: "s"))
    var seconds: Double?

    func validate() throws {
        // Written so that NaN fails too: every comparison with NaN is false.
        if let seconds, !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be more than 0 and at most 86400 (a day).")
        }
    }

    func run() async throws {
        let (found, problems) = sensors.tree.survey()
        if !json {
            TerminalDisplay.line("Accelerometers under \(sensors.iioRoot):")
            if found.isEmpty { TerminalDisplay.line("  none") }
            for device in found {
                let frequency = device.samplingFrequency.map { String(format: "%g Hz", $0) } ?? "no sampling_frequency"
                let available = device.availableFrequencies.map { String(format: "%g", $0) }.joined(separator: " ")
                TerminalDisplay.line("  \(device.id)  \(device.chipName)  scale \(device.scale[0]) m/s² per unit  \(frequency)"
                    + (available.isEmpty ? "" : " (available: \(available))") + (device.supportsBuffer ? "  buffer" : ""))
            }
            for problem in problems { TerminalDisplay.line("  unusable: \(problem)") }
        }
        let accelerometer = sensors.setup.accelerometerInput()
        let microphone = sensors.setup.microphoneInput()
        if !json {
            switch microphone {
            case .success(let input): TerminalDisplay.line("Microphone: \(input.label)")
            case .failure(let error): TerminalDisplay.line("Microphone: none (\(error))")
            }
            if case .failure(let error) = accelerometer, !found.isEmpty || sensors.accelFile != nil {
                TerminalDisplay.line("Accelerometer: none (\(error))")
            }
        }
        let accelerometerInput = try? accelerometer.get()
        let microphoneInput = try? microphone.get()
        guard accelerometerInput != nil || microphoneInput != nil else {
            var reasons: [String] = []
            if case .failure(let error) = accelerometer { reasons.append(error.description) }
            if case .failure(let error) = microphone { reasons.append(error.description) }
            throw CommandFailure("No sensor to read. " + reasons.joined(separator: " ") + " See hardware-notes.md.")
        }
        if !json { TerminalDisplay.line("Live readings (Ctrl-C to stop):") }
        let latest = LatestReadings()
        let emitJSON = json
        let accelerations = accelerometerInput?.samples()
        let levels = microphoneInput?.levels()
        let watch: @Sendable () async throws -> Void = {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let accelerations {
                    group.addTask {
                        try await Self.follow(accelerations, sensor: "accel", json: emitJSON) { latest.update($0) }
                        latest.finishOne()
                    }
                }
                if let levels {
                    group.addTask {
                        try await Self.follow(levels, sensor: "mic", json: emitJSON) { latest.update($0) }
                        latest.finishOne()
                    }
                }
                let inputs = (accelerations == nil ? 0 : 1) + (levels == nil ? 0 : 1)
                if !emitJSON {
                    group.addTask {
                        while !Task.isCancelled, latest.finished < inputs {
                            let (sample, level) = latest.current
                            let meter = level.map(TerminalDisplay.levelMeter) ?? ""
                            let axes = sample.map(TerminalDisplay.axes) ?? ""
                            TerminalDisplay.status([meter, axes].filter { !$0.isEmpty }.joined(separator: "  "))
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
                if let seconds {
                    group.addTask { try await Task.sleep(for: .seconds(seconds)) }
                    try await group.next()
                    group.cancelAll()
                }
                try await group.waitForAll()
            }
        }
        var failure: (any Error)?
        do {
            try await runUntilInterrupted(watch)
        } catch is CancellationError {
        } catch {
            failure = error
        }
        // The reading threads restore the devices (IIO buffer off, PCM closed) before we exit.
        await accelerations?.stopAndWait()
        await levels?.stopAndWait()
        if let failure { throw failure }
        if !json { TerminalDisplay.line("") }
    }

    /// Hands every sample of `stream` to `update` (the live view's), and with `json` writes it as
    /// a line tagged `sensor`.
    private static func follow<Sample: Encodable & Sendable>(_ stream: SensorStream<Sample>, sensor: String, json: Bool,
                                                              update: (Sample) -> Void) async throws {
        for try await sample in stream {
            if json { TerminalDisplay.json(TaggedSample(sensor: sensor, sample: sample)) }
            update(sample)
        }
    }
}

/// The newest reading of each sensor, for the live display.
final class LatestReadings: Sendable {
    private let state = Mutex<(AccelerationSample?, LevelSample?, finished: Int)>((nil, nil, 0))

    func update(_ sample: AccelerationSample) { state.withLock { $0.0 = sample } }

    func update(_ level: LevelSample) { state.withLock { $0.1 = level } }

    /// Notes that one sensor's stream ended (a file ran out).
    func finishOne() { state.withLock { $0.finished += 1 } }

    var finished: Int { state.withLock { $0.finished } }

    var current: (AccelerationSample?, LevelSample?) { state.withLock { ($0.0, $0.1) } }
}
