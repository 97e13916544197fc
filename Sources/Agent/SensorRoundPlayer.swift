import Foundation
import LobbyClient
import Logging
import Minigames
import Rounds
import SensorSamples

/// Plays rounds on this device's sensors (the agent's `sensors` setup), or from a folder of
/// recorded inputs, through the same ``RoundRunner`` as `nearplay practice`. The plan (length,
/// and Quickdraw's signal) is the lobby's; the calibration is the device's own, which the agent
/// also stores at the lobby so both score the round alike.
public struct SensorRoundPlayer: RoundPlaying {
    public let sensors: SensorSetup
    public let recordings: String?
    public let calibration: SensorCalibration
    let logger: Logger

    public init(sensors: SensorSetup, recordings: String?, calibration: SensorCalibration, logger: Logger = Logger(label: "nearplay.rounds")) {
        self.sensors = sensors
        self.recordings = recordings
        self.calibration = calibration
        self.logger = logger
    }

    /// The setup for one game: the recorded inputs of that game where the folder has them.
    public func setup(for game: MinigameName) throws(AgentError) -> SensorSetup {
        guard let recordings else { return sensors }
        var setup = sensors
        let accel = recordings + "/\(game).jsonl", audio = recordings + "/\(game).raw"
        if FileManager.default.fileExists(atPath: accel) { setup.accelFile = accel }
        if FileManager.default.fileExists(atPath: audio) { setup.audioFile = audio }
        guard setup.accelFile != nil || setup.audioFile != nil else {
            throw AgentError("There is no recording for \(game) in \(recordings) (expected \(game).jsonl or \(game).raw).", code: "sensorFailure")
        }
        return setup
    }

    /// Three seconds to read the instructions and get ready; none when playing recordings.
    public var countdown: Double { recordings == nil ? 3 : 0 }

    public func play(_ round: RoundPlanned) async throws -> PlayedRound {
        guard let game = MinigameCatalog.game(named: round.minigame) else {
            throw AgentError("The lobby proposed \(round.minigame.rawValue.debugDescription), a game this agent does not know; update nearplay.", code: "unknownGame")
        }
        let plan = RoundPlan(duration: round.duration ?? game.duration, signalTime: round.signalTime)
        let runner = RoundRunner(sensors: try setup(for: game.name), logger: logger)
        let recording: RoundRecording
        do {
            recording = try await runner.play(game, plan: plan, calibration: calibration)
        } catch let error as RoundError {
            throw AgentError("\(error)", code: "sensorFailure")
        }
        return PlayedRound(score: game.score(recording).score, recording: recording)
    }
}
