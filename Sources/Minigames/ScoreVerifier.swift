import SensorSamples

/// Checks a claimed score against the round it came from, so a client cannot simply claim 1000.
///
/// It refuses a recording no real sensor could have produced: levels above full scale, an RMS
/// above its own peak, times that do not strictly increase or come faster than any sensor
/// delivers, accelerations beyond any accelerometer's range, a stream of identical or
/// weightless readings, rounds the samples do not cover (a gap of more than ``maximumGap``, or
/// too few samples for the round), more shakes than a hand can make, a calibration no device at
/// rest gives, and a Quickdraw signal outside the game's range. Then it recomputes the score
/// with the game's own scoring and refuses a claim that differs from it by more than
/// ``tolerance``.
///
/// What it cannot catch: a client that forges a whole, physically plausible recording. The
/// calibration and the Quickdraw signal come from the client here and are only bounded: a lobby
/// should use its own stored calibration of the device and the signal time it issued itself,
/// replacing the recording's before verifying. It makes cheating harder, not impossible.
public struct ScoreVerifier: Sendable {
    /// Points a claim may differ from the recomputed score (0: exact, which is right when the
    /// recording is sent as recorded; JSON round trips of doubles are exact).
    public var tolerance: Int
    /// Largest acceleration magnitude accepted, m/s² (±16 g is the widest common range; 32 g
    /// leaves room for sum of axes).
    public var maximumAcceleration = 32 * standardGravity
    /// Fastest accelerometer rate accepted, samples per second. Samples closer together than
    /// half its period are refused (half: timestamps jitter).
    public var maximumSampleRate = 4000.0
    /// Slowest accelerometer rate accepted over a round, samples per second.
    public var minimumSampleRate = 8.0
    /// Shortest microphone window accepted, seconds.
    public var minimumWindow = 0.005
    /// The microphone window the games expect, seconds; a round needs at least 80% of the
    /// windows of this length that fit in it.
    public var expectedWindow = 0.05
    /// Longest stretch of a round, seconds, with no sample of a sensor the game reads,
    /// including from the start and to the end.
    public var maximumGap = 0.25
    /// Most shakes per second a hand can make.
    public var maximumShakeRate = 10.0
    /// Largest accelerometer noise at rest accepted in a calibration, m/s².
    public var maximumCalibratedNoise = 0.1
    /// Gravity a calibrated accelerometer may read at rest, in g.
    public var calibratedGravity = 0.9 ... 1.1

    public init(tolerance: Int = 0) {
        self.tolerance = tolerance
    }

    /// The recomputed score when the claim stands; throws why it does not.
    @discardableResult
    public func verify(claimedScore: Int, recording: RoundRecording) throws(ScoreRefusal) -> GameScore {
        guard let game = MinigameCatalog.game(named: recording.game) else { throw .unknownGame(recording.game) }
        try checkPlausible(recording, game: game)
        if let shaker = game as? Shaker {
            try checkShakeRate(shaker.shakeTimes(recording.accelerationsInRound))
        }
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
        if let quickdraw = game as? Quickdraw {
            guard let signal = recording.signalTime, quickdraw.signalDelay.contains(signal) else {
                throw .implausible("a quickdraw signal comes \(quickdraw.signalDelay.lowerBound)–\(quickdraw.signalDelay.upperBound) s into the round, not at \(recording.signalTime.map { "\($0) s" } ?? "no time")")
            }
        }
        try checkCalibration(recording.calibration)
        try checkLevels(recording.levels, duration: recording.duration)
        try checkAccelerations(recording.accelerations, duration: recording.duration)
        if game.sensors.contains(.microphone) {
            let times = recording.levelsInRound.map(\.time)
            try checkCoverage(times, duration: recording.duration, sensor: "microphone")
            let needed = Int(0.8 * recording.duration / expectedWindow)
            guard times.count >= needed else {
                throw .implausible("\(times.count) level windows are too few for \(recording.duration) s (at least \(needed))")
            }
        }
        if game.sensors.contains(.accelerometer) {
            let samples = recording.accelerationsInRound
            try checkCoverage(samples.map(\.time), duration: recording.duration, sensor: "accelerometer")
            let needed = Int(minimumSampleRate * recording.duration)
            guard samples.count >= needed else {
                throw .implausible("\(samples.count) accelerometer samples are too few for \(recording.duration) s (at least \(needed))")
            }
            try checkLiveAccelerometer(samples)
        }
    }

    /// No second of the round holds more than ``maximumShakeRate`` shakes.
    private func checkShakeRate(_ times: [Double]) throws(ScoreRefusal) {
        let most = Int(maximumShakeRate)
        guard most >= 1, times.count > most else { return }
        for index in 0..<(times.count - most) where times[index + most] - times[index] < 1 {
            throw .implausible("\(most + 1) shakes within a second from \(times[index]) s is more than a hand can make")
        }
    }

    /// A calibration a device at rest in a quiet room could give (the lobby should prefer its own,
    /// and checks one with this before storing it).
    public func checkCalibration(_ calibration: SensorCalibration) throws(ScoreRefusal) {
        if let accelerometer = calibration.accelerometer {
            guard accelerometer.noise >= 0, accelerometer.noise <= maximumCalibratedNoise else {
                throw .implausible("a calibrated accelerometer noise of \(accelerometer.noise) m/s² is not between 0 and \(maximumCalibratedNoise)")
            }
            guard calibratedGravity.contains(accelerometer.gravity / standardGravity) else {
                throw .implausible("a calibrated gravity of \(accelerometer.gravity) m/s² is not \(calibratedGravity.lowerBound)–\(calibratedGravity.upperBound) g")
            }
        }
        if let microphone = calibration.microphone, !Screamer.noiseFloorRange.contains(microphone.noiseFloorDBFS) {
            throw .implausible("a noise floor of \(microphone.noiseFloorDBFS) dBFS is outside \(Screamer.noiseFloorRange.lowerBound)…\(Screamer.noiseFloorRange.upperBound)")
        }
    }

    /// Samples from the start to the end of the round with no gap over ``maximumGap``.
    private func checkCoverage(_ times: [Double], duration: Double, sensor: String) throws(ScoreRefusal) {
        var previous = 0.0
        for time in times + [duration] {
            guard time - previous <= maximumGap else {
                throw .implausible("the \(sensor) has no sample from \(previous) s to \(time) s of the round")
            }
            previous = time
        }
    }

    /// Not a stream of identical readings, nor one that feels no gravity: a real chip has noise,
    /// and on Earth it reads about 1 g on average.
    private func checkLiveAccelerometer(_ samples: [AccelerationSample]) throws(ScoreRefusal) {
        guard let first = samples.first else { return }
        guard samples.contains(where: { $0.x != first.x || $0.y != first.y || $0.z != first.z }) else {
            throw .implausible("all \(samples.count) accelerometer readings are identical; a real sensor has noise")
        }
        let meanMagnitude = samples.map(\.magnitude).reduce(0, +) / Double(samples.count)
        guard meanMagnitude >= 0.5 * standardGravity else {
            throw .implausible("the accelerometer reads \(meanMagnitude / standardGravity) g on average; at rest it reads about 1 g")
        }
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
            guard level.time - previous >= minimumWindow, level.overruns >= previousOverruns else {
                throw .implausible("level \(index) comes less than \(minimumWindow) s after the one before, or goes back in overrun count")
            }
            previous = level.time
            previousOverruns = level.overruns
        }
    }

    private func checkAccelerations(_ samples: [AccelerationSample], duration: Double) throws(ScoreRefusal) {
        var previous = -Double.infinity
        let spacing = 0.5 / maximumSampleRate
        for (index, sample) in samples.enumerated() {
            guard sample.time.isFinite, sample.x.isFinite, sample.y.isFinite, sample.z.isFinite else {
                throw .implausible("acceleration \(index) is not a finite number")
            }
            guard sample.magnitude <= maximumAcceleration else {
                throw .implausible("acceleration \(index) of \(sample.magnitude / standardGravity) g is beyond any accelerometer's range")
            }
            guard sample.time - previous >= spacing else {
                throw .implausible("acceleration \(index) comes less than \(spacing) s after the one before (faster than \(maximumSampleRate) Hz, or back in time)")
            }
            previous = sample.time
        }
    }
}

/// Why a claimed score was refused.
public enum ScoreRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownGame(MinigameName)
    /// The recording could not come from a real sensor.
    case implausible(String)
    /// The recording gives another score than the one claimed.
    case scoreMismatch(claimed: Int, recomputed: Int)

    public var description: String {
        switch self {
        case .unknownGame(let name): "There is no game called \(name.rawValue.debugDescription)."
        case .implausible(let reason): "The recording cannot come from a real sensor: \(reason)."
        case .scoreMismatch(let claimed, let recomputed): "The recording scores \(recomputed), not the \(claimed) claimed."
        }
    }
}
