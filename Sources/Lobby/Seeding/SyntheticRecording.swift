import Foundation
import Minigames
import SensorSamples

/// Made-up round recordings that a real device could have produced and that give a chosen score:
/// for seeding load tests (``LobbySeeder``), demos and tests, which must send recordings the lobby
/// verifies. Samples are as `Tests/MinigamesTests/Fixtures.swift` makes them: 100 Hz
/// accelerometer readings of a device lying flat with a little deterministic noise, 50 ms
/// microphone windows; with a real sensor's fingerprint (``SensorFingerprint``): accelerometer
/// times jitter by up to 0.4 ms, and no microphone window repeats the level before it.
public enum SyntheticRecording {
    /// A recording of `game` played on the given plan that ``ScoreVerifier`` accepts and that
    /// scores exactly `score` under `calibration`, or nil when none of the shapes made here gives
    /// it (Shaker scores only multiples of 20; Quickdraw needs its signal time).
    public static func scoring(
        _ score: Int, game: MinigameName, duration: Double, signalTime: Double? = nil,
        calibration: SensorCalibration = SensorCalibration()
    ) -> RoundRecording? {
        guard (0...1000).contains(score), duration.isFinite, duration > 0 else { return nil }
        let make: (Double) -> RoundRecording
        let range: ClosedRange<Double>
        let rising: Bool
        switch MinigameCatalog.game(named: game) {
        case is Statue:
            // Scores fall as the wobble grows.
            make = { RoundRecording(game: .statue, duration: duration, accelerations: still(seconds: duration, wobble: $0), calibration: calibration) }
            range = 0.001 ... 4
            rising = false
        case is Screamer:
            // Scores rise with the level of the shout.
            make = { RoundRecording(game: .screamer, duration: duration, levels: levels(seconds: duration, rms: $0), calibration: calibration) }
            range = -100 ... -3
            rising = true
        case is Quickdraw:
            guard let signalTime else { return nil }
            if score == 0 {
                return checked(RoundRecording(game: .quickdraw, duration: duration, signalTime: signalTime,
                                              accelerations: still(seconds: duration, wobble: 0.02), calibration: calibration), score)
            }
            // Scores fall as the reaction slows.
            make = { RoundRecording(game: .quickdraw, duration: duration, signalTime: signalTime,
                                    accelerations: jerk(at: signalTime + $0, seconds: duration), calibration: calibration) }
            range = Quickdraw().fastestReaction ... Quickdraw().slowestReaction
            rising = false
        case let shaker as Shaker:
            guard score % shaker.pointsPerShake == 0 else { return nil }
            return checked(RoundRecording(game: .shaker, duration: duration,
                                          accelerations: shakes(count: score / shaker.pointsPerShake, seconds: duration), calibration: calibration), score)
        default:
            return nil
        }
        // Bisection on the one parameter: the score is monotonic in it and rounds to each integer
        // over an interval of it.
        var (low, high) = (range.lowerBound, range.upperBound)
        for candidate in [low, high] {
            let recording = make(candidate)
            if scoreOf(recording) == score { return checked(recording, score) }
        }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            let recording = make(middle)
            let value = scoreOf(recording)
            if value == score { return checked(recording, score) }
            if (value < score) == rising { low = middle } else { high = middle }
        }
        return nil
    }

    private static func scoreOf(_ recording: RoundRecording) -> Int {
        MinigameCatalog.game(named: recording.game)?.score(recording).score ?? -1
    }

    private static func checked(_ recording: RoundRecording, _ score: Int) -> RoundRecording? {
        (try? ScoreVerifier().verify(claimedScore: score, recording: recording)) == nil ? nil : recording
    }

    /// A device lying flat (gravity on z) at 100 Hz, wobbling by `wobble` m/s².
    static func still(seconds: Double, wobble: Double, from start: Double = 0) -> [AccelerationSample] {
        (0..<max(0, Int(seconds * 100))).map { index in
            let offset = wobble * sin(Double(index) * 1.7)
            return AccelerationSample(time: start + Double(index) / 100 + jitter(index), x: offset, y: -offset, z: standardGravity + offset)
        }
    }

    /// The scheduling jitter of a polled accelerometer, deterministic: up to ±0.4 ms, 0 for the
    /// first sample (so a stretch starts exactly where it is asked to).
    static func jitter(_ index: Int) -> Double {
        0.0004 * sin(Double(index) * 2.3)
    }

    /// 20 windows a second at `rms` at most (the first window exactly), the others up to 0.6 dB
    /// below, each a little different, as a steady sound's windows are; the peak 3 dB above.
    static func levels(seconds: Double, rms: Double) -> [LevelSample] {
        (0..<max(0, Int(seconds * 20))).map { index in
            let level = max(LevelMeter.silenceFloor, rms - 0.6 * abs(sin(Double(index) * 1.3)))
            return LevelSample(time: Double(index + 1) * 0.05, rmsDBFS: level, peakDBFS: min(0, level + 3))
        }
    }

    /// Still, then a 2 g jerk along x from exactly `time` for 100 ms, then still again.
    static func jerk(at time: Double, seconds: Double) -> [AccelerationSample] {
        let before = still(seconds: seconds, wobble: 0.02).filter { $0.time < time - 0.002 }
        let moving = (0..<10).map { AccelerationSample(time: time + Double($0) * 0.01, x: 2 * standardGravity, y: 0, z: standardGravity) }
        return before + moving + still(seconds: seconds - time - 0.1, wobble: 0.02, from: time + 0.1)
    }

    /// `count` shakes of 4.5 g (80 ms each, 100 ms of rest between), then the device at rest.
    static func shakes(count: Int, seconds: Double) -> [AccelerationSample] {
        var samples: [AccelerationSample] = []
        var time = 0.0
        for _ in 0..<count {
            for _ in 0..<8 {
                samples.append(AccelerationSample(time: time + jitter(samples.count), x: 4.5 * standardGravity, y: 0, z: 0))
                time += 0.01
            }
            for _ in 0..<10 {
                samples.append(AccelerationSample(time: time + jitter(samples.count), x: 0, y: 0, z: standardGravity))
                time += 0.01
            }
        }
        return samples + still(seconds: seconds - time, wobble: 0.02, from: time)
    }
}
