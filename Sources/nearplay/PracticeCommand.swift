import ArgumentParser
import Foundation
import Minigames
import Rounds
import Sensors
import Synchronization

/// `nearplay practice GAME`: a solo round in the terminal.
struct PracticeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "practice",
        abstract: "Play a solo round of a minigame in the terminal.",
        discussion: "Games: \(MinigameCatalog.all.map { "\($0.name) (\($0.instructions))" }.joined(separator: "; "))"
    )

    @Argument(help: ArgumentHelp("The game: \(MinigameCatalog.names.map(\.rawValue).joined(separator: ", ")).", valueName: "game"))
    var game: String

    @OptionGroup var sensors: SensorOptions

    @Flag(help: "Print the result as JSON: {\"game\":…,\"score\":…,\"details\":{…}}.")
    var json = false

    @Option(help: ArgumentHelp("Seconds of countdown before the round.", valueName: "s"))
    var countdown: Int = 3

    @Option(help: ArgumentHelp("Also write the whole round (samples, calibration, score inputs) to this JSON file.", valueName: "file"))
    var saveRecording: String?

    func validate() throws {
        guard MinigameCatalog.game(named: MinigameName(game)) != nil else {
            throw ValidationError("There is no game called \(game.debugDescription): pick one of \(MinigameCatalog.names.map(\.rawValue).joined(separator: ", ")).")
        }
        guard (0...10).contains(countdown) else { throw ValidationError("--countdown must be between 0 and 10 seconds.") }
    }

    func run() async throws {
        guard let minigame = MinigameCatalog.game(named: MinigameName(game)) else { return }
        var generator: any RandomNumberGenerator = SystemRandomNumberGenerator()
        let plan = minigame.plan(using: &generator)
        let calibration = try sensors.calibrationStore.load()
        let runner = RoundRunner(sensors: sensors.setup)
        // Found before the countdown, so a missing sensor is reported at once.
        let inputs = try runner.inputs(for: minigame)

        TerminalDisplay.line("\(minigame.name.rawValue.capitalized): \(minigame.instructions) (\(Int(plan.duration)) s)")
        if let microphone = inputs.microphone, let calibrated = calibration.microphone?.pcm, calibrated != microphone.pcm {
            TerminalDisplay.line("Note: the noise floor was calibrated on \(calibrated), not \(microphone.pcm); run `nearplay calibrate sensors --pcm \(microphone.pcm)`.")
        }
        for second in stride(from: countdown, to: 0, by: -1) {
            TerminalDisplay.status("\(second)…")
            try await Task.sleep(for: .seconds(1))
        }
        TerminalDisplay.status(plan.signalTime == nil ? "GO!" : "Wait for it…")
        let elapsed = ElapsedSeconds()
        let result: Result<RoundRecording, any Error>
        do {
            result = .success(try await runUntilInterrupted {
                try await runner.play(minigame, inputs: inputs, plan: plan, calibration: calibration) { progress in
                    elapsed.value = progress.elapsed
                    var parts: [String] = [String(format: "%4.1f s", progress.remaining)]
                    if let shown = progress.signalShown { parts.append(shown ? "DRAW!" : "wait…") }
                    if let level = progress.level { parts.append(TerminalDisplay.levelMeter(level)) }
                    if let sample = progress.acceleration { parts.append(TerminalDisplay.axes(sample)) }
                    TerminalDisplay.status(parts.joined(separator: "  "))
                }
            })
        } catch {
            result = .failure(error)
        }
        TerminalDisplay.line("")
        let recording: RoundRecording
        do {
            recording = try result.get()
        } catch is CancellationError {
            throw CommandFailure("The round was interrupted after \(Int(elapsed.value)) s; no score.")
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
}

/// How far the round got, for the message when it is interrupted.
final class ElapsedSeconds: Sendable {
    private let seconds = Mutex(0.0)

    var value: Double {
        get { seconds.withLock { $0 } }
        set { seconds.withLock { $0 = newValue } }
    }
}
