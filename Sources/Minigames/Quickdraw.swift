import SensorSamples

/// Wait for the signal, then jerk the device. After a random delay (2–5 s) a signal appears; the
/// score comes from the reaction time to the first strong movement: 1000 at exactly
/// ``fastestReaction``, falling linearly to 0 at ``slowestReaction``. Moving before the signal,
/// or less than ``fastestReaction`` after it, scores 0: no person reacts that fast, so the move
/// was started before the signal (anticipation), not a reaction to it.
///
/// The signal time is part of the recording; a lobby should draw it itself (``plan(using:)``)
/// and check the recording carries the one it issued, or a client can place the signal just
/// before its own movement. ``ScoreVerifier`` only checks it lies in ``signalDelay``.
///
/// A strong movement is a sample whose magnitude differs from gravity at rest by at least
/// ``movementG``.
public struct Quickdraw: Minigame {
    public let name = MinigameName.quickdraw
    public let instructions = "Hold the device still. When you see DRAW!, jerk it as fast as you can. Move early and you lose."
    public let duration = 8.0
    public let sensors: Set<SensorKind> = [.accelerometer]
    public let movementG = 0.6
    public let fastestReaction = 0.1
    public let slowestReaction = 1.5
    /// The range of the random delay before the signal, in seconds.
    public let signalDelay = 2.0 ... 5.0

    public init() {}

    public func plan(using generator: inout any RandomNumberGenerator) -> RoundPlan {
        RoundPlan(duration: duration, signalTime: Double.random(in: signalDelay, using: &generator))
    }

    public func score(_ recording: RoundRecording) -> GameScore {
        guard let signal = recording.signalTime, signal.isFinite else {
            return GameScore(game: name, score: 0, details: ["no_signal": 1])
        }
        let gravity = min(1.5, max(0.5, (recording.calibration.accelerometer?.gravity ?? standardGravity) / standardGravity))
        let first = recording.accelerationsInRound.first {
            abs($0.magnitude / standardGravity - gravity) >= movementG
        }
        var details: [String: Double] = ["signal_s": signal, "gravity_g": gravity]
        guard let first else {
            details["moved"] = 0
            return GameScore(game: name, score: 0, details: details)
        }
        let reaction = first.time - signal
        details["reaction_s"] = reaction
        guard reaction.isFinite, reaction >= fastestReaction else {
            details["early"] = 1
            return GameScore(game: name, score: 0, details: details)
        }
        let fraction = (slowestReaction - reaction) / (slowestReaction - fastestReaction)
        return GameScore(game: name, score: Int((1000 * min(1, max(0, fraction))).rounded()), details: details)
    }
}
