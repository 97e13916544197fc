import ArgumentParser
import Foundation
import Minigames
import Rounds
import Sensors
import Synchronization

/// `nearplay calibrate sensors`: the microphone's noise floor and the accelerometer at rest.
struct CalibrateSensors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "Measure the microphone noise floor and the accelerometer at rest, and store them.",
        discussion: "Keep the room quiet and lay the device flat and still while it measures. Games use the noise floor so that a quiet room scores nothing, and the accelerometer's gravity and noise to tell motion from stillness."
    )

    @OptionGroup var sensors: SensorOptions

    @Option(help: ArgumentHelp("Seconds to measure each sensor.", valueName: "s"))
    var seconds: Double = 3

    @Flag(help: "Print the stored calibration as JSON.")
    var json = false

    func validate() throws {
        guard seconds >= 0.5, seconds <= 120 else { throw ValidationError("--seconds must be between 0.5 and 120.") }
    }

    func run() async throws {
        let store = sensors.calibrationStore
        var calibration = try store.load()
        var measured: [String] = []
        var problems: [String] = []

        switch sensors.setup.microphoneInput(paced: false) {
        case .success(let input):
            TerminalDisplay.line("Measuring the noise floor of \(input.label) for \(seconds) s: keep quiet…")
            let levels = try await collect(input.levels(), for: seconds) { $0.time }
            if var microphone = MicrophoneCalibration.measure(pcm: input.pcm, levels: levels) {
                // Held in the range games and the score verifier accept (a muted input reads −120).
                let range = Screamer.noiseFloorRange
                let measuredFloor = microphone.noiseFloorDBFS
                microphone.noiseFloorDBFS = min(range.upperBound, max(range.lowerBound, measuredFloor))
                calibration.microphone = microphone
                measured.append(String(format: "microphone noise floor %.1f dBFS (%d windows)", measuredFloor, levels.count)
                    + (measuredFloor == microphone.noiseFloorDBFS ? "" : String(format: ", stored as %.0f, the nearest games accept", microphone.noiseFloorDBFS)))
            } else {
                problems.append("the microphone delivered no audio")
            }
        case .failure(let error):
            problems.append(error.description)
        }

        switch sensors.setup.accelerometerInput(paced: false) {
        case .success(let input):
            TerminalDisplay.line("Measuring \(input.label) for \(seconds) s: lay the device flat and do not touch it…")
            let samples = try await collect(input.samples(), for: seconds) { $0.time }
            if let accelerometer = AccelerometerCalibration.measure(device: input.id, samples: samples) {
                // Only what the score verifier accepts is stored: anything else means the device moved.
                let limits = ScoreVerifier()
                if accelerometer.noise <= limits.maximumCalibratedNoise,
                   limits.calibratedGravity.contains(accelerometer.gravity / standardGravity) {
                    calibration.accelerometer = accelerometer
                    measured.append(String(format: "accelerometer gravity %.3f m/s² (offset %+.3f), noise %.3f m/s² (%d samples)",
                                           accelerometer.gravity, accelerometer.gravityOffset, accelerometer.noise, samples.count))
                } else {
                    problems.append(String(format: "the accelerometer read %.3f g with a noise of %.3f m/s², not a device at rest (at most %g m/s², %g–%g g): lay it flat, do not touch it, and run this again",
                                           accelerometer.gravity / standardGravity, accelerometer.noise, limits.maximumCalibratedNoise,
                                           limits.calibratedGravity.lowerBound, limits.calibratedGravity.upperBound))
                }
            } else {
                problems.append("the accelerometer delivered no samples")
            }
        case .failure(let error):
            problems.append(error.description)
        }

        guard !measured.isEmpty else {
            throw CommandFailure("Nothing was calibrated. " + problems.joined(separator: " "))
        }
        try store.save(calibration)
        for line in measured { TerminalDisplay.line("  " + line) }
        for problem in problems { TerminalDisplay.line("  not calibrated: " + problem) }
        TerminalDisplay.line("Stored in \(store.path).")
        if json { TerminalDisplay.json(calibration) }
    }

    /// The elements of `stream` whose time (from the first element on) is within `seconds`; gives
    /// up when 2 s pass with nothing delivered, so a sensor that stalls cannot hang the command
    /// (an idle limit, not a total one, so a busy machine reading a file is never cut short). Stops
    /// the sensor and waits for its thread to clean up before returning; Ctrl-C ends the
    /// measurement and the command, storing nothing.
    private func collect<Element: Sendable>(_ stream: SensorStream<Element>, for seconds: Double,
                                            time: @escaping @Sendable (Element) -> Double) async throws -> [Element] {
        let progress = ProgressCount()
        let collector = Task { () async throws -> [Element] in
            var elements: [Element] = []
            var first: Double?
            for try await element in stream {
                progress.increment()
                let start = first ?? time(element)
                first = start
                if time(element) - start > seconds { break }
                elements.append(element)
            }
            return elements
        }
        let interrupted = InterruptFlag()
        let interrupt = InterruptHandler {
            interrupted.set()
            collector.cancel()
        }
        defer { withExtendedLifetime(interrupt) {} }
        let timer = Task {
            var seen = -1
            while progress.value != seen {
                seen = progress.value
                try await Task.sleep(for: .seconds(2))
            }
            collector.cancel()
        }
        defer { timer.cancel() }
        let result = await collector.result
        await stream.stopAndWait()
        if interrupted.isSet { throw CommandFailure("Interrupted: nothing was stored.") }
        return try result.get()
    }
}

/// Set by an interrupt handler, read by the command.
final class InterruptFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }

    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// How many elements a collector has taken, for its idle limit.
final class ProgressCount: Sendable {
    private let count = Atomic<Int>(0)

    func increment() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}
