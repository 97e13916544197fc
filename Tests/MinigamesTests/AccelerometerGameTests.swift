import Foundation
import Testing
@testable import Minigames
import Sensors

struct ShakerTests {
    let game = Shaker()

    func round(_ samples: [AccelerationSample]) -> RoundRecording {
        RoundRecording(game: "shaker", duration: 10, accelerations: samples)
    }

    @Test func countsPeaksNotSamples() {
        let score = game.score(round(Synthetic.shakes(count: 7, peakG: 4.5, samplesPerShake: 12)))
        #expect(score.details["shakes"] == 7)
        #expect(score.score == 7 * game.pointsPerShake)
        #expect(score.details["samples"] == Double(7 * 22))
    }

    @Test func shakesBelowTheThresholdDoNotCount() {
        #expect(game.score(round(Synthetic.shakes(count: 7, peakG: 3.5))).score == 0)
        #expect(Shaker(thresholdG: 3).score(round(Synthetic.shakes(count: 7, peakG: 3.5))).details["shakes"] == 7)
    }

    @Test func jitterAroundTheThresholdIsOneShake() {
        // Wobbling between 3.9 and 4.6 g never drops below the re-arm level: one peak.
        let samples = (0..<100).map { AccelerationSample(time: Double($0) * 0.01, x: ($0 % 2 == 0 ? 4.6 : 3.9) * standardGravity, y: 0, z: 0) }
        #expect(game.score(round(samples)).details["shakes"] == 1)
    }

    @Test func keepsTheThresholdBetweenThreeAndFiveG() {
        #expect(Shaker(thresholdG: 1).thresholdG == 3)
        #expect(Shaker(thresholdG: 9).thresholdG == 5)
    }

    @Test func stillnessScoresZero() {
        #expect(game.score(round(Synthetic.still(seconds: 10))).score == 0)
    }

    @Test func samplesAfterTheRoundDoNotCount() {
        var samples = Synthetic.shakes(count: 3, peakG: 4.5)
        samples += Synthetic.shakes(count: 3, peakG: 4.5).map { AccelerationSample(time: $0.time + 20, x: $0.x, y: $0.y, z: $0.z) }
        #expect(game.score(round(samples)).details["shakes"] == 3)
    }

    /// Samples written as JSON Lines (as `nearplay sensors --json` does) and read back.
    @Test func scoresARecordedRound() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-shaker-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let encoder = JSONEncoder()
        let lines = try Synthetic.shakes(count: 5, peakG: 4.2).map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
        let samples = try SampleFile(path: url.path).accelerations()
        #expect(game.score(round(samples)).details["shakes"] == 5)
    }
}

struct StatueTests {
    let game = Statue()

    func round(_ samples: [AccelerationSample], noise: Double? = nil) -> RoundRecording {
        let calibration = noise.map { AccelerometerCalibration(device: "d", rest: [0, 0, standardGravity], gravity: standardGravity, noise: $0) }
        return RoundRecording(game: "statue", duration: 10, accelerations: samples, calibration: SensorCalibration(accelerometer: calibration))
    }

    @Test func stillnessWithinTheNoiseScoresOneThousand() {
        #expect(game.score(round(Synthetic.still(seconds: 10, noise: 0.02), noise: 0.03)).score == 1000)
    }

    @Test func moreMotionScoresLess() {
        let scores = [0.02, 0.2, 0.5, 1.0, 3.0].map { game.score(round(Synthetic.still(seconds: 10, noise: $0), noise: 0.02)).score }
        #expect(scores == scores.sorted(by: >))
        #expect(Set(scores).count == scores.count, "\(scores)")
        #expect(scores.last! < 50)
    }

    @Test func tiltingCountsAsMotion() {
        let tilt = (0..<1000).map { index -> AccelerationSample in
            let angle = Double(index) / 1000 * 0.5
            return AccelerationSample(time: Double(index) / 100, x: standardGravity * sin(angle), y: 0, z: standardGravity * cos(angle))
        }
        #expect(game.score(round(tilt)).score < 500)
    }

    @Test func tooFewSamplesScoreZero() {
        #expect(game.score(round(Synthetic.still(seconds: 0.05))).score == 0)
    }
}

struct QuickdrawTests {
    let game = Quickdraw()

    /// Still until `moveAt`, then a jerk of 2 g.
    func round(signal: Double?, moveAt: Double?) -> RoundRecording {
        let samples = Synthetic.still(seconds: game.duration).map { sample in
            guard let moveAt, sample.time >= moveAt, sample.time < moveAt + 0.1 else { return sample }
            return AccelerationSample(time: sample.time, x: 2 * standardGravity, y: 0, z: standardGravity)
        }
        return RoundRecording(game: "quickdraw", duration: game.duration, signalTime: signal, accelerations: samples)
    }

    @Test func movingEarlyScoresZero() {
        let score = game.score(round(signal: 3, moveAt: 2.5))
        #expect(score.score == 0)
        #expect(score.details["early"] == 1)
    }

    @Test func anticipatingTheSignalScoresZero() {
        #expect(game.score(round(signal: 3, moveAt: 3.05)).score == 0)
    }

    @Test func fasterReactionsScoreMore() {
        let fast = game.score(round(signal: 3, moveAt: 3.2))
        let slow = game.score(round(signal: 3, moveAt: 3.8))
        #expect(abs(fast.details["reaction_s"]! - 0.2) < 1e-9)
        #expect(fast.score == Int((1000 * (1.5 - 0.2) / 1.4).rounded()))
        #expect(slow.score < fast.score)
        #expect(game.score(round(signal: 3, moveAt: 4.6)).score == 0)
    }

    @Test func neverMovingScoresZero() {
        #expect(game.score(round(signal: 3, moveAt: nil)).score == 0)
        #expect(game.score(round(signal: nil, moveAt: 3.3)).score == 0)
    }

    @Test func drawsTheSignalTimeAtRandomWithinItsRange() {
        var generator: any RandomNumberGenerator = SeededGenerator(state: 1)
        let times = (0..<200).compactMap { _ in game.plan(using: &generator).signalTime }
        #expect(times.count == 200)
        #expect(times.allSatisfy { game.signalDelay.contains($0) })
        #expect(Set(times).count > 150)
    }
}

struct CatalogTests {
    @Test func listsEveryGameOnceByName() {
        #expect(MinigameCatalog.names == ["screamer", "shaker", "statue", "quickdraw"])
        #expect(MinigameCatalog.game(named: "Shaker")?.sensors == [.accelerometer])
        #expect(MinigameCatalog.game(named: "tetris") == nil)
        #expect(MinigameCatalog.all.allSatisfy { !$0.instructions.isEmpty && $0.duration > 0 })
    }
}
