import Testing
@testable import Minigames
import Sensors

struct ScoreVerifierTests {
    let verifier = ScoreVerifier()

    func screamerRound(rms: Double) -> RoundRecording {
        RoundRecording(game: "screamer", duration: 5, levels: Synthetic.levels(seconds: 5, rms: rms))
    }

    @Test func acceptsTheScoreTheSamplesGive() throws {
        let recording = screamerRound(rms: -12)
        let honest = Screamer().score(recording).score
        #expect(try verifier.verify(claimedScore: honest, recording: recording).score == honest)
    }

    @Test func refusesAForgedThousand() {
        let recording = screamerRound(rms: -30)
        let honest = Screamer().score(recording).score
        #expect(throws: ScoreRefusal.scoreMismatch(claimed: 1000, recomputed: honest)) {
            try verifier.verify(claimedScore: 1000, recording: recording)
        }
        let shakes = RoundRecording(game: "shaker", duration: 10, accelerations: Synthetic.shakes(count: 2, peakG: 4.5))
        #expect(throws: ScoreRefusal.scoreMismatch(claimed: 1000, recomputed: 40)) {
            try verifier.verify(claimedScore: 1000, recording: shakes)
        }
    }

    @Test func allowsTheConfiguredTolerance() throws {
        let recording = screamerRound(rms: -12)
        let honest = Screamer().score(recording).score
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: honest + 2, recording: recording) }
        try ScoreVerifier(tolerance: 2).verify(claimedScore: honest + 2, recording: recording)
    }

    @Test func refusesLevelsNoMicrophoneCanProduce() {
        var aboveFullScale = screamerRound(rms: -3)
        aboveFullScale.levels[3].peakDBFS = 6
        var rmsAbovePeak = screamerRound(rms: -10)
        rmsAbovePeak.levels[3].peakDBFS = -20
        var tooMany = screamerRound(rms: -10)
        tooMany.levels = (0..<5000).map { LevelSample(time: Double($0) * 0.001, rmsDBFS: -3, peakDBFS: 0) }
        var backwards = screamerRound(rms: -10)
        backwards.levels[5].time = 0.01
        for recording in [aboveFullScale, rmsAbovePeak, tooMany, backwards] {
            #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Screamer().score(recording).score, recording: recording) }
        }
    }

    @Test func refusesAccelerationsBeyondAnySensor() {
        var recording = RoundRecording(game: "shaker", duration: 10, accelerations: Synthetic.shakes(count: 3, peakG: 100))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 60, recording: recording) }
        recording.accelerations = (0..<100_000).map { AccelerationSample(time: Double($0) * 0.0001, x: 0, y: 0, z: 9.8) }
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 0, recording: recording) }
    }

    @Test func refusesRoundsLongerThanTheGame() {
        let recording = RoundRecording(game: "shaker", duration: 60, accelerations: Synthetic.shakes(count: 40, peakG: 4.5))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 800, recording: recording) }
    }

    @Test func refusesUnknownGames() {
        #expect(throws: ScoreRefusal.unknownGame("tetris")) {
            try verifier.verify(claimedScore: 1, recording: RoundRecording(game: "tetris", duration: 1))
        }
    }

    @Test func refusesAQuickdrawSignalOutsideTheRound() {
        let recording = RoundRecording(game: "quickdraw", duration: 8, signalTime: 30, accelerations: Synthetic.still(seconds: 8))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 0, recording: recording) }
    }
}
