import ArgumentParser
import Foundation
import Minigames
import Sensors
import Synchronization

/// `nearplay practice GAME`: a solo round in the terminal.
struct PracticeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "practice",
        abstract: "Play a solo round of a minigame in the terminal.",
        discussion: "Games: \(MinigameCatalog.all.map { "\($0.name) (\($0.instructions))" }.joined(separator: "; "))"
    )

    @Argument(help: ArgumentHelp("The game: \(MinigameCatalog.names.joined(separator: ", ")).", valueName: "game"))
    var game: String

    @OptionGroup var sensors: SensorOptions

    @Flag(help: "Print the result as JSON: {\"game\":…,\"score\":…,\"details\":{…}}.")
    var json = false

    @Option(help: ArgumentHelp("Seconds of countdown before the round.", valueName: "s"))
    var countdown: Int = 3

    @Option(help: ArgumentHelp("Also write the whole round (samples, calibration, score inputs) to this JSON file.", valueName: "file"))
    var saveRecording: String?

    func validate() throws {
        guard MinigameCatalog.game(named: game) != nil else {
            throw ValidationError("There is no game called \(game.debugDescription): pick one of \(MinigameCatalog.names.joined(separator: ", ")).")
        }
        guard (0...10).contains(countdown) else { throw ValidationError("--countdown must be between 0 and 10 seconds.") }
    }

    func run() async throws {
        guard let minigame = MinigameCatalog.game(named: game) else { return }
        var generator: any RandomNumberGenerator = SystemRandomNumberGenerator()
        let plan = minigame.plan(using: &generator)
        let calibration = try sensors.calibrationStore.load()

        var accelerometer: AccelerometerInput?
        var microphone: MicrophoneInput?
        // Every sensor the game needs played from a file: the round runs on the recording's clock.
        let fromRecordings = (!minigame.sensors.contains(.accelerometer) || sensors.accelFile != nil)
            && (!minigame.sensors.contains(.microphone) || sensors.audioFile != nil)
        if minigame.sensors.contains(.accelerometer) {
            accelerometer = try sensors.accelerometerInput(paced: !fromRecordings).get()
        }
        if minigame.sensors.contains(.microphone) {
            microphone = try sensors.microphoneInput(paced: !fromRecordings).get()
        }

        TerminalDisplay.line("\(minigame.name.capitalized): \(minigame.instructions) (\(Int(plan.duration)) s)")
        if let microphone, let calibrated = calibration.microphone?.pcm, calibrated != microphone.pcm {
            TerminalDisplay.line("Note: the noise floor was calibrated on \(calibrated), not \(microphone.pcm); run `nearplay calibrate sensors --pcm \(microphone.pcm)`.")
        }
        for second in stride(from: countdown, to: 0, by: -1) {
            TerminalDisplay.status("\(second)…")
            try await Task.sleep(for: .seconds(1))
        }
        let recording: RoundRecording
        if fromRecordings {
            recording = try await recordedRound(game: minigame.name, plan: plan, calibration: calibration,
                                                accelerometer: accelerometer, microphone: microphone)
        } else {
            recording = try await liveRound(game: minigame.name, plan: plan, calibration: calibration,
                                            accelerometer: accelerometer, microphone: microphone)
        }
        let score = try ScoreVerifier().verify(claimedScore: minigame.score(recording).score, recording: recording)
        if let saveRecording {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(recording).write(to: URL(fileURLWithPath: saveRecording))
        }
        if json {
            TerminalDisplay.json(score)
        } else {
            print("Score: \(score.score)")
            for (name, value) in score.details.sorted(by: { $0.key < $1.key }) {
                print("  \(name): \(String(format: "%g", value))")
            }
        }
    }

    /// A round on live sensors, timed by the wall clock, with a live meter.
    private func liveRound(game: String, plan: RoundPlan, calibration: SensorCalibration,
                           accelerometer: AccelerometerInput?, microphone: MicrophoneInput?) async throws -> RoundRecording {
        // Sensors start with the round, so a recording fed from a file starts at its beginning.
        let start = monotonicSeconds()
        let recorder = RoundRecorder(start: start)
        let accelerations = accelerometer?.samples()
        let levels = microphone?.levels()
        let collecting = Task {
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if let accelerations {
                        group.addTask { for try await sample in accelerations { recorder.add(sample) } }
                    }
                    if let levels {
                        group.addTask { for try await level in levels { recorder.add(level) } }
                    }
                    try await group.waitForAll()
                }
            } catch {
                recorder.fail(error)
            }
        }
        let interrupt = InterruptHandler { collecting.cancel() }
        defer { withExtendedLifetime(interrupt) {} }

        TerminalDisplay.status(plan.signalTime == nil ? "GO!" : "Wait for it…")
        while monotonicSeconds() - start < plan.duration, !collecting.isCancelled, recorder.failure == nil {
            let elapsed = monotonicSeconds() - start
            let (level, sample) = recorder.latest
            var parts: [String] = [String(format: "%4.1f s", plan.duration - elapsed)]
            if let signal = plan.signalTime { parts.append(elapsed >= signal ? "DRAW!" : "wait…") }
            if let level { parts.append(TerminalDisplay.levelMeter(level)) }
            if let sample { parts.append(TerminalDisplay.axes(sample)) }
            TerminalDisplay.status(parts.joined(separator: "  "))
            try? await Task.sleep(for: .milliseconds(50))
        }
        let ended = monotonicSeconds() - start
        // Stop the sensors but keep what they already read; cancel only if they do not end.
        accelerations?.stop()
        levels?.stop()
        let deadline = Task {
            try await Task.sleep(for: .seconds(2))
            collecting.cancel()
        }
        await collecting.value
        deadline.cancel()
        TerminalDisplay.line("")
        if let failure = recorder.failure { throw failure }
        if ended < plan.duration { throw CommandFailure("The round was interrupted after \(Int(ended)) s; no score.") }

        return recorder.recording(game: game, plan: plan, calibration: calibration)
    }

    /// A round played from recordings: the files are read as fast as they can be and the round
    /// runs on their own clock (each stream's times from its first sample), so a busy machine can
    /// slow the round down but not shift or cut it.
    private func recordedRound(game: String, plan: RoundPlan, calibration: SensorCalibration,
                               accelerometer: AccelerometerInput?, microphone: MicrophoneInput?) async throws -> RoundRecording {
        var levels: [LevelSample] = []
        var accelerations: [AccelerationSample] = []
        if let microphone {
            var first: Double?
            for try await level in microphone.levels() {
                let start = first ?? level.time
                first = start
                var moved = level
                moved.time -= start
                if moved.time > plan.duration { break }
                levels.append(moved)
            }
        }
        if let accelerometer {
            var first: Double?
            for try await sample in accelerometer.samples() {
                let start = first ?? sample.time
                first = start
                var moved = sample
                moved.time -= start
                if moved.time > plan.duration { break }
                accelerations.append(moved)
            }
        }
        return RoundRecording(game: game, duration: plan.duration, signalTime: plan.signalTime,
                              levels: levels, accelerations: accelerations, calibration: calibration)
    }
}

/// Collects a round's samples from the sensor tasks, with times moved to seconds since the round
/// started.
///
/// Each stream has its own clock (IIO timestamps, capture time, file times). Every sample is
/// noted with its arrival on CLOCK_MONOTONIC; the least-delayed sample of a stream (smallest
/// arrival − sample time) ties that stream's clock to the round's, so a consumer that fell
/// behind for a while does not shift the samples.
final class RoundRecorder: Sendable {
    private struct State {
        var accelerations: [(sample: AccelerationSample, arrival: Double)] = []
        var levels: [(sample: LevelSample, arrival: Double)] = []
        var failure: (any Error)?
    }

    private let start: Double
    private let state = Mutex(State())

    init(start: Double) { self.start = start }

    func add(_ sample: AccelerationSample) {
        let now = monotonicSeconds()
        state.withLock { $0.accelerations.append((sample, now)) }
    }

    func add(_ level: LevelSample) {
        let now = monotonicSeconds()
        state.withLock { $0.levels.append((level, now)) }
    }

    /// Records why a sensor stopped delivering.
    func fail(_ error: any Error) { state.withLock { $0.failure = $0.failure ?? error } }

    var failure: (any Error)? { state.withLock { $0.failure } }

    var latest: (LevelSample?, AccelerationSample?) {
        state.withLock { ($0.levels.last?.sample, $0.accelerations.last?.sample) }
    }

    func recording(game: String, plan: RoundPlan, calibration: SensorCalibration) -> RoundRecording {
        state.withLock { state in
            let accelerationOffset = state.accelerations.map { $0.arrival - $0.sample.time }.min() ?? 0
            let levelOffset = state.levels.map { $0.arrival - $0.sample.time }.min() ?? 0
            let accelerations = state.accelerations.map { entry in
                var moved = entry.sample
                moved.time += accelerationOffset - start
                return moved
            }
            let levels = state.levels.map { entry in
                var moved = entry.sample
                moved.time += levelOffset - start
                return moved
            }
            return RoundRecording(game: game, duration: plan.duration, signalTime: plan.signalTime,
                                  levels: levels.filter { $0.time >= 0 }, accelerations: accelerations.filter { $0.time >= 0 },
                                  calibration: calibration)
        }
    }
}
