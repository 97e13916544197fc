import ArgumentParser
import Foundation
import Minigames
import Rounds
import Sensors

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
            if let measuredMicrophone = MicrophoneCalibration.measure(pcm: input.pcm, levels: levels) {
                let microphone = ScoreVerifier().storable(measuredMicrophone)
                let measuredFloor = measuredMicrophone.noiseFloorDBFS
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
            if let measuredAccelerometer = AccelerometerCalibration.measure(device: input.id, samples: samples) {
                do throws(AccelerometerNotAtRest) {
                    let accelerometer = try ScoreVerifier().storable(measuredAccelerometer)
                    calibration.accelerometer = accelerometer
                    measured.append(String(format: "accelerometer gravity %.3f m/s² (offset %+.3f), noise %.3f m/s² (%d samples)",
                                           accelerometer.gravity, accelerometer.gravityOffset, accelerometer.noise, samples.count))
                } catch {
                    problems.append(String(format: "the accelerometer read %.3f g with a noise of %.3f m/s², not a device at rest (at most %g m/s², %g–%g g): lay it flat, do not touch it, and run this again",
                                           error.measured.gravity / standardGravity, error.measured.noise, error.maximumNoise,
                                           error.gravity.lowerBound, error.gravity.upperBound))
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

    /// ``SensorStream/collect(for:idleLimit:time:)`` for `seconds`, ended by Ctrl-C, which ends
    /// the command too, storing nothing.
    private func collect<Element: Sendable>(_ stream: SensorStream<Element>, for seconds: Double,
                                            time: @escaping @Sendable (Element) -> Double) async throws -> [Element] {
        do {
            return try await runUntilInterrupted { try await stream.collect(for: seconds, time: time) }
        } catch is CancellationError {
            throw CommandFailure("Interrupted: nothing was stored.")
        }
    }
}
