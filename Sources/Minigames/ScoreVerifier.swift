import Sensors

/// Checks a claimed score against the round it came from, so a client cannot simply claim 1000.
///
/// It refuses a recording no real sensor could have produced (levels above full scale, an RMS
/// above its own peak, more windows or samples than the round had time for, accelerations beyond
/// any accelerometer's range, times out of order) and then recomputes the score with the game's
/// own scoring and refuses a claim that differs from it by more than ``tolerance``.
///
/// What it cannot catch: a client that forges a whole, physically plausible recording. The lobby
/// calls it on every submitted round; it makes cheating harder, not impossible.
public struct ScoreVerifier: Sendable {
    /// Points a claim may differ from the recomputed score (0: exact, which is right when the
    /// recording is sent as recorded; JSON round trips of doubles are exact).
    public var tolerance: Int
    /// Largest acceleration magnitude accepted, m/s² (±16 g is the widest common range; 32 g
    /// leaves room for sum of axes).
    public var maximumAcceleration = 32 * standardGravity
    /// Fastest accelerometer rate accepted, samples per second.
    public var maximumSampleRate = 4000.0
    /// Shortest microphone window accepted, seconds.
    public var minimumWindow = 0.005

    public init(tolerance: Int = 0) {
        self.tolerance = tolerance
    }

    /// The recomputed score when the claim stands; throws why it does not.
    @discardableResult
    public func verify(claimedScore: Int, recording: RoundRecording) throws(ScoreRefusal) -> GameScore {
        guard let game = MinigameCatalog.game(named: recording.game) else { throw .unknownGame(recording.game) }
        try checkPlausible(recording, game: game)
        let recomputed = game.score(recording)
        guard abs(recomputed.score - claimedScore) <= tolerance else {
            throw .scoreMismatch(claimed: claimedScore, recomputed: recomputed.score)
        }
        return recomputed
    }

    func checkPlausible(_ recording: RoundRecording, game: any Minigame) throws(ScoreRefusal) {
        guard recording.duration.isFinite, recording.duration > 0, recording.duration <= game.duration + 1 else {
            throw .implausible("a \(game.name) round lasts \(game.duration) s, not \(recording.duration) s")
        }
        if let signal = recording.signalTime, !(signal.isFinite && signal >= 0 && signal <= recording.duration) {
            throw .implausible("signal at \(signal) s is outside the round")
        }
        try checkLevels(recording.levels, duration: recording.duration)
        try checkAccelerations(recording.accelerations, duration: recording.duration)
    }

    private func checkLevels(_ levels: [LevelSample], duration: Double) throws(ScoreRefusal) {
        var previous = -Double.infinity
        var previousOverruns = 0
        for (index, level) in levels.enumerated() {
            guard level.time.isFinite, level.rmsDBFS.isFinite, level.peakDBFS.isFinite else {
                throw .implausible("level \(index) is not a finite number")
            }
            guard level.peakDBFS <= 0.001, level.rmsDBFS <= 0.001 else {
                throw .implausible("level \(index) is above full scale (\(level.peakDBFS) dBFS)")
            }
            guard level.rmsDBFS >= LevelMeter.silenceFloor, level.rmsDBFS <= level.peakDBFS + 0.001 else {
                throw .implausible("level \(index) has an RMS of \(level.rmsDBFS) dBFS, above its peak of \(level.peakDBFS)")
            }
            guard level.time >= previous, level.overruns >= previousOverruns else {
                throw .implausible("level \(index) goes back in time or in overrun count")
            }
            previous = level.time
            previousOverruns = level.overruns
        }
        let inRound = levels.filter { $0.time >= 0 && $0.time <= duration }.count
        guard Double(inRound) <= duration / minimumWindow + 1 else {
            throw .implausible("\(inRound) level windows do not fit in \(duration) s")
        }
    }

    private func checkAccelerations(_ samples: [AccelerationSample], duration: Double) throws(ScoreRefusal) {
        var previous = -Double.infinity
        for (index, sample) in samples.enumerated() {
            guard sample.time.isFinite, sample.x.isFinite, sample.y.isFinite, sample.z.isFinite else {
                throw .implausible("acceleration \(index) is not a finite number")
            }
            guard sample.magnitude <= maximumAcceleration else {
                throw .implausible("acceleration \(index) of \(sample.magnitude / standardGravity) g is beyond any accelerometer's range")
            }
            guard sample.time >= previous else { throw .implausible("acceleration \(index) goes back in time") }
            previous = sample.time
        }
        let inRound = samples.filter { $0.time >= 0 && $0.time <= duration }.count
        guard Double(inRound) <= duration * maximumSampleRate + 1 else {
            throw .implausible("\(inRound) accelerometer samples do not fit in \(duration) s")
        }
    }
}

/// Why a claimed score was refused.
public enum ScoreRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownGame(String)
    /// The recording could not come from a real sensor.
    case implausible(String)
    /// The recording gives another score than the one claimed.
    case scoreMismatch(claimed: Int, recomputed: Int)

    public var description: String {
        switch self {
        case .unknownGame(let name): "There is no game called \(name.debugDescription)."
        case .implausible(let reason): "The recording cannot come from a real sensor: \(reason)."
        case .scoreMismatch(let claimed, let recomputed): "The recording scores \(recomputed), not the \(claimed) claimed."
        }
    }
}
