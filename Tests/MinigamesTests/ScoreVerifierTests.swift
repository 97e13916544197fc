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
        let shakes = RoundRecording(game: "shaker", duration: 10, accelerations: Synthetic.shakerRound(count: 2, peakG: 4.5))
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
        var recording = RoundRecording(game: "shaker", duration: 10, accelerations: Synthetic.shakerRound(count: 3, peakG: 100))
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

    // Forged recordings the reviewer found verifying as 1000, each next to a genuine one.

    @Test func refusesShakesPiledOnOneInstant() throws {
        let peak = 4.6 * standardGravity
        let piled: [AccelerationSample] = (0..<100).map { (index: Int) -> AccelerationSample in
            AccelerationSample(time: 1, x: index % 2 == 0 ? peak : 0, y: 0, z: 0)
        }
        let forged = RoundRecording(game: "shaker", duration: 10, accelerations: piled)
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: forged) }
        let genuine = RoundRecording(game: "shaker", duration: 10, accelerations: Synthetic.shakerRound(count: 30, peakG: 4.6))
        #expect(try verifier.verify(claimedScore: 600, recording: genuine).score == 600)
    }

    @Test func refusesShakesFasterThanAHand() {
        // 50 shakes in 1 s (samples 10 ms apart, every other one at 4.6 g), then rest.
        let peak = 4.6 * standardGravity
        var samples: [AccelerationSample] = []
        for index in 0..<100 {
            let shaking = index % 2 == 0
            samples.append(AccelerationSample(time: Double(index) * 0.01, x: shaking ? peak : 0, y: 0, z: shaking ? 0 : standardGravity))
        }
        samples += Synthetic.still(seconds: 9, from: 1)
        let forged = RoundRecording(game: "shaker", duration: 10, accelerations: samples)
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Shaker().score(forged).score, recording: forged) }
    }

    @Test func refusesAStatueOfIdenticalSamplesAtOneInstant() throws {
        let forged = RoundRecording(game: "statue", duration: 10, accelerations: Array(repeating: AccelerationSample(time: 0, x: 0, y: 0, z: standardGravity), count: 10))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: forged) }
        // Well spread but all identical, or weightless: no real chip reads that.
        let identical = RoundRecording(game: "statue", duration: 10, accelerations: (0..<1000).map { AccelerationSample(time: Double($0) * 0.01, x: 0, y: 0, z: standardGravity) })
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: identical) }
        let weightless = RoundRecording(game: "statue", duration: 10, accelerations: Synthetic.still(seconds: 10).map { AccelerationSample(time: $0.time, x: $0.x, y: $0.y, z: $0.z - standardGravity) })
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: weightless) }
        // A round covered only in part.
        let firstSecond = RoundRecording(game: "statue", duration: 10, accelerations: Synthetic.still(seconds: 1))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: firstSecond) }
        let genuine = RoundRecording(game: "statue", duration: 10, accelerations: Synthetic.still(seconds: 10))
        #expect(try verifier.verify(claimedScore: 1000, recording: genuine).score == 1000)
    }

    @Test func refusesAStatueWithTooFewSamplesForTheRound() {
        // 5 Hz: no gap reaches 0.25 s… only because there are none; still far too few samples.
        let sparse = RoundRecording(game: "statue", duration: 10, accelerations: Synthetic.still(seconds: 10, rate: 5))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Statue().score(sparse).score, recording: sparse) }
    }

    @Test func refusesAQuickdrawWithOneSampleOrASignalOutOfRange() throws {
        let forged = RoundRecording(game: "quickdraw", duration: 8, signalTime: 0, accelerations: [AccelerationSample(time: 0.1, x: 20, y: 0, z: 0)])
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: forged) }
        let earlySignal = RoundRecording(game: "quickdraw", duration: 8, signalTime: 0.5, accelerations: Synthetic.quickdrawRound(reactionAt: 0.6))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Quickdraw().score(earlySignal).score, recording: earlySignal) }
        let noSignal = RoundRecording(game: "quickdraw", duration: 8, accelerations: Synthetic.quickdrawRound(reactionAt: 3))
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 0, recording: noSignal) }
        let genuine = RoundRecording(game: "quickdraw", duration: 8, signalTime: 3, accelerations: Synthetic.quickdrawRound(reactionAt: 3.3))
        let score = try verifier.verify(claimedScore: Quickdraw().score(genuine).score, recording: genuine)
        #expect(score.score > 800 && score.score < 900, "0.3 s reaction, got \(score.score)")
    }

    @Test func refusesAScreamerOfOneLoudWindow() throws {
        let forged = RoundRecording(game: "screamer", duration: 5, levels: [LevelSample(time: 2, rmsDBFS: -3, peakDBFS: 0)])
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: 1000, recording: forged) }
        var gap = screamerRound(rms: -20)
        gap.levels.removeSubrange(40..<50)
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Screamer().score(gap).score, recording: gap) }
        var crowded = screamerRound(rms: -20)
        crowded.levels[10].time = crowded.levels[9].time + 0.001
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Screamer().score(crowded).score, recording: crowded) }
    }

    @Test func refusesCalibrationsNoDeviceAtRestGives() throws {
        func statue(noise: Double, gravity: Double) -> RoundRecording {
            RoundRecording(game: "statue", duration: 10, accelerations: Synthetic.still(seconds: 10, noise: 0.5),
                           calibration: SensorCalibration(accelerometer: AccelerometerCalibration(device: "x", rest: [0, 0, gravity], gravity: gravity, noise: noise)))
        }
        for forged in [statue(noise: 0.5, gravity: standardGravity), statue(noise: .nan, gravity: standardGravity),
                       statue(noise: 0.02, gravity: 2 * standardGravity), statue(noise: 0.02, gravity: .nan)] {
            #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Statue().score(forged).score, recording: forged) }
        }
        let genuine = statue(noise: 0.03, gravity: 9.7)
        try verifier.verify(claimedScore: Statue().score(genuine).score, recording: genuine)
        var loudFloor = screamerRound(rms: -10)
        loudFloor.calibration.microphone = MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -400)
        #expect(throws: ScoreRefusal.self) { try verifier.verify(claimedScore: Screamer().score(loudFloor).score, recording: loudFloor) }
    }
}
