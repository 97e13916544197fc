import Testing
@testable import Minigames
import Sensors

/// Every game scores every recording, however forged, without trapping, and within 0...1000.
struct ScoringTotalityTests {
    static let extremes: [Double] = [0, -0.0, 1, -1, 1e-300, 1e20, -1e20, 1e300, -1e300, .infinity, -.infinity, .nan, .greatestFiniteMagnitude]

    @Test func quickdrawWithASignalFarInThePastScoresZero() {
        var recording = RoundRecording(game: "quickdraw", duration: 8, signalTime: -1e20, accelerations: Synthetic.quickdrawRound(reactionAt: 3))
        #expect(Quickdraw().score(recording).score == 0)
        recording.signalTime = .nan
        #expect(Quickdraw().score(recording).score == 0)
    }

    /// Reacting 50 ms after the signal is anticipation: 0, not 1000.
    @Test func quickdrawFasterThanHumanlyPossibleIsAnticipation() {
        let recording = RoundRecording(game: "quickdraw", duration: 8, signalTime: 3, accelerations: Synthetic.quickdrawRound(reactionAt: 3.05))
        let score = Quickdraw().score(recording)
        #expect(score.score == 0)
        #expect(score.details["early"] == 1)
        let atFastest = RoundRecording(game: "quickdraw", duration: 8, signalTime: 3, accelerations: Synthetic.quickdrawRound(reactionAt: 3.1))
        #expect(Quickdraw().score(atFastest).score == 1000)
    }

    @Test func everyGameScoresExtremeRecordingsWithinRange() {
        for game in MinigameCatalog.all {
            for value in Self.extremes {
                for time in [0.5, value] {
                    let recording = RoundRecording(
                        game: game.name, duration: value.isFinite ? min(abs(value), 1e6) : game.duration, signalTime: value,
                        levels: [LevelSample(time: time, rmsDBFS: value, peakDBFS: value, overruns: 0)],
                        accelerations: Array(repeating: AccelerationSample(time: time, x: value, y: -value, z: value), count: 12),
                        calibration: SensorCalibration(
                            microphone: MicrophoneCalibration(pcm: "x", noiseFloorDBFS: value),
                            accelerometer: AccelerometerCalibration(device: "x", rest: [value, value, value], gravity: value, noise: value)))
                    let score = game.score(recording).score
                    #expect((0...1000).contains(score), "\(game.name) with \(value) at \(time) s gave \(score)")
                    #expect(throws: ScoreRefusal.self) { try ScoreVerifier().verify(claimedScore: 1000, recording: recording) }
                }
            }
        }
    }
}
