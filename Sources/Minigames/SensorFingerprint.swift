import SensorSamples

/// Whether a recording carries the marks a real sensor leaves and a script easily forgets: an
/// accelerometer's timestamps jitter (a polled chip is read when the scheduler gets to it, a
/// buffered one stamps samples with a clock that drifts against its oscillator), and a
/// microphone's quiet windows never repeat one RMS level exactly (the level of 800 samples of
/// real noise is a different number every window).
///
/// One recording without the marks proves nothing (a test fixture, a file sensor); the lobby
/// counts them across a player's history (``ScoreScrutiny`` in `Lobby`). The microphone's
/// windows are timed by the number of audio frames read, so their times are periodic on real
/// devices too and are not looked at.
public enum SensorFingerprint {
    /// Fewest samples of a sensor needed to judge it.
    public static let minimumSamples = 20
    /// Accelerometer intervals that all lie within this many seconds of each other are
    /// "perfectly periodic": 1 µs, well below the scheduling jitter of a polled chip (tens of µs
    /// and more) and the rounding of `nearplay sensors --json` (µs).
    public static let periodicSpread = 1e-6
    /// Share of consecutive quiet microphone windows with exactly the level of the one before
    /// above which the floor is "identical".
    public static let repeatedLevelShare = 0.5

    /// Why `recording` lacks a real sensor's fingerprint, or nil when it has one (or there is
    /// too little of a sensor to tell).
    public static func missing(in recording: RoundRecording) -> String? {
        let samples = recording.accelerationsInRound
        if samples.count >= minimumSamples {
            var smallest = Double.infinity, largest = -Double.infinity
            for index in 1..<samples.count {
                let interval = samples[index].time - samples[index - 1].time
                smallest = min(smallest, interval)
                largest = max(largest, interval)
            }
            if largest - smallest < periodicSpread {
                return "all \(samples.count) accelerometer samples are exactly \(formatted(smallest * 1000)) ms apart; a real sensor's timing jitters"
            }
        }
        let levels = recording.levelsInRound
        if levels.count >= minimumSamples, let loudest = levels.map(\.rmsDBFS).max() {
            // The quiet windows: those well below the shout, where only the room and the
            // microphone's own noise are heard.
            let quiet = levels.filter { $0.rmsDBFS < loudest - 10 }.map(\.rmsDBFS)
            let considered = quiet.count >= minimumSamples ? quiet : levels.map(\.rmsDBFS)
            let repeats = zip(considered, considered.dropFirst()).filter { $0 == $1 }.count
            if Double(repeats) > repeatedLevelShare * Double(considered.count - 1) {
                return "\(repeats) of \(considered.count - 1) quiet microphone windows repeat the level before them exactly; real noise never does"
            }
        }
        return nil
    }

    private static func formatted(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
