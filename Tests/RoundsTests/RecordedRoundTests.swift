import Foundation
import Minigames
import Rounds
import Sensors
import TestSupport
import Testing

/// Rounds whose every sensor is a file: read at once, on the files' own clock, and scored as
/// the games score them.
struct RecordedRoundTests {
    let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder() }

    /// A device lying flat at 100 Hz from `start` on the file's clock, with a small wobble.
    static func still(seconds: Double, start: Double, wobble: Double = 0.02) -> [AccelerationSample] {
        (0..<Int(seconds * 100)).map { index in
            let noise = wobble * sin(Double(index) * 1.7)
            return AccelerationSample(time: start + Double(index) / 100, x: noise, y: -noise, z: standardGravity + noise)
        }
    }

    @Test func aScreamerRoundGivesTheFileWindowsAndTheirScore() async throws {
        // 5.5 s: quiet, a loud second from 1 s, quiet.
        let samples = (0..<(16_000 * 11 / 2)).map { index -> Int16 in
            let amplitude = index >= 16_000 && index < 32_000 ? 20_000.0 : 20.0
            return Int16(amplitude * sin(Double(index) * 0.31))
        }
        let audio = try folder.writeAudio(samples, to: "shout.raw")
        let runner = RoundRunner(sensors: SensorSetup(audioFile: audio, calibration: folder.noCalibration))
        let plan = RoundPlan(duration: 5)
        let progress = ProgressLog()
        let recording = try await runner.play(Screamer(), plan: plan, calibration: SensorCalibration()) { progress.note($0) }

        let expected = expectedRound(try RawAudioFile(path: audio).allLevels(), duration: 5, time: \.time)
        #expect(recording == RoundRecording(game: "screamer", duration: 5, levels: expected))
        #expect(recording.levels.count == 101, "windows at 0, 0.05 … 5 s, the file's tail left out")
        #expect(recording.accelerations.isEmpty)
        let score = try ScoreVerifier().verify(claimedScore: Screamer().score(recording).score, recording: recording)
        // A sine of amplitude 20000: −4.29 dB sine-referenced, stretched from the uncalibrated
        // threshold of −54 dB.
        #expect(score.score == 566)
        #expect(abs((score.details["loudest_db"] ?? 0) - -4.29) < 0.05)
        #expect(progress.all.count >= 90, "about one report per 50 ms of the round")
        #expect(progress.all.allSatisfy { $0.signalShown == nil && $0.duration == 5 && $0.acceleration == nil })
    }

    @Test func aShakerRoundCountsTheShakesInTheFile() async throws {
        // Twelve 5 g shakes along x, 0.5 s apart, on a clock that reads 250 s at the start; the
        // file runs past the round's 10 s.
        let shakes = Set((0..<12).map { 50 + 50 * $0 })
        let samples = Self.still(seconds: 10.5, start: 250).enumerated().map { index, sample in
            guard shakes.contains(index) || shakes.contains(index - 1) else { return sample }
            return AccelerationSample(time: sample.time, x: 5 * standardGravity, y: 0.3, z: standardGravity)
        }
        let file = try folder.writeAccelerations(samples, to: "shake.jsonl")
        let runner = RoundRunner(sensors: SensorSetup(accelFile: file, calibration: folder.noCalibration))
        let recording = try await runner.play(Shaker(), plan: RoundPlan(duration: 10), calibration: SensorCalibration())

        let expected = expectedRound(try SampleFile(path: file).accelerations(), duration: 10, time: \.time)
        #expect(recording == RoundRecording(game: "shaker", duration: 10, accelerations: expected))
        #expect(recording.accelerations.first?.time == 0)
        #expect(recording.accelerations.allSatisfy { $0.time <= 10 })
        let score = try ScoreVerifier().verify(claimedScore: 240, recording: recording)
        #expect(score.details["shakes"] == 12)
    }

    @Test func aStatueRoundCarriesTheCalibrationItWasGiven() async throws {
        // A sway of 0.4 m/s² amplitude along x: about 0.28 m/s² RMS.
        let samples = Self.still(seconds: 10.2, start: 81.5, wobble: 0).enumerated().map { index, sample in
            AccelerationSample(time: sample.time, x: 0.4 * sin(Double(index) * 0.25), y: 0.01 * Double(index % 3), z: sample.z)
        }
        let file = try folder.writeAccelerations(samples, to: "still.jsonl")
        let calibration = SensorCalibration(accelerometer: AccelerometerCalibration(
            device: "iio:device0", rest: [0, 0, 9.81], gravity: 9.81, noise: 0.02))
        let runner = RoundRunner(sensors: SensorSetup(accelFile: file))
        let recording = try await runner.play(Statue(), plan: RoundPlan(duration: 10), calibration: calibration)

        let expected = expectedRound(try SampleFile(path: file).accelerations(), duration: 10, time: \.time)
        #expect(recording == RoundRecording(game: "statue", duration: 10, accelerations: expected, calibration: calibration))
        let score = try ScoreVerifier().verify(claimedScore: Statue().score(recording).score, recording: recording)
        let motion = try #require(score.details["motion_ms2"])
        #expect(abs(motion - 0.4 / 2.0.squareRoot()) < 0.01)
        #expect(score.details["noise_ms2"] == 0.02, "the calibration given is the one scored with")
        #expect(score.score == Int((1000 * exp(-(motion - 0.04) / 0.3)).rounded()))
        #expect(score.score > 380 && score.score < 480)
    }

    @Test func aQuickdrawRoundUsesTheSignalTimeOfThePlan() async throws {
        // Still, then a 2 g jerk 3.6 s into the file; the plan shows the signal at 3 s.
        let samples = Self.still(seconds: 8.3, start: 12).map { sample in
            let into = sample.time - 12
            guard into >= 3.595, into < 3.7 else { return sample }
            return AccelerationSample(time: sample.time, x: 2 * standardGravity, y: 0, z: standardGravity)
        }
        let file = try folder.writeAccelerations(samples, to: "draw.jsonl")
        let runner = RoundRunner(sensors: SensorSetup(accelFile: file, calibration: folder.noCalibration))
        let plan = RoundPlan(duration: 8, signalTime: 3)
        let progress = ProgressLog()
        let recording = try await runner.play(Quickdraw(), plan: plan, calibration: SensorCalibration()) { progress.note($0) }

        #expect(recording.signalTime == 3)
        #expect(recording.accelerations == expectedRound(try SampleFile(path: file).accelerations(), duration: 8, time: \.time))
        // Reaction 0.6 s: 1000 · (1.5 − 0.6) / (1.5 − 0.1) = 642.9.
        let score = try ScoreVerifier().verify(claimedScore: 643, recording: recording)
        #expect(abs((score.details["reaction_s"] ?? 0) - 0.6) < 0.006)
        let reports = progress.all
        #expect(reports.contains { $0.signalShown == false } && reports.contains { $0.signalShown == true })
        #expect(reports.allSatisfy { $0.signalShown == ($0.elapsed >= 3) })
    }
}
