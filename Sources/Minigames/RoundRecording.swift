import SensorSamples

/// Everything recorded during one round: the input to scoring and to the plausibility check.
///
/// Sample times are seconds from the start of the round (after the countdown); samples outside
/// `0...duration` do not count.
public struct RoundRecording: Hashable, Codable, Sendable {
    /// The game's ``Minigame/name``.
    public var game: MinigameName
    /// Seconds the round lasted.
    public var duration: Double
    /// Seconds from the start when the signal was shown (Quickdraw); nil for games without one.
    public var signalTime: Double?
    public var levels: [LevelSample]
    public var accelerations: [AccelerationSample]
    /// The device's calibration when the round was played.
    public var calibration: SensorCalibration

    public init(game: MinigameName, duration: Double, signalTime: Double? = nil, levels: [LevelSample] = [],
                accelerations: [AccelerationSample] = [], calibration: SensorCalibration = SensorCalibration()) {
        self.game = game
        self.duration = duration
        self.signalTime = signalTime
        self.levels = levels
        self.accelerations = accelerations
        self.calibration = calibration
    }

    /// The levels inside the round.
    public var levelsInRound: [LevelSample] {
        levels.filter { $0.time >= 0 && $0.time <= duration }
    }

    /// The accelerometer samples inside the round.
    public var accelerationsInRound: [AccelerationSample] {
        accelerations.filter { $0.time >= 0 && $0.time <= duration }
    }

    enum CodingKeys: String, CodingKey {
        case game, duration, signalTime = "signal_time", levels, accelerations, calibration
    }
}
