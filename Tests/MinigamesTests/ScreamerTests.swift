import Foundation
import Testing
@testable import Minigames
import Sensors

struct ScreamerTests {
    let game = Screamer()

    func round(_ levels: [LevelSample], noiseFloor: Double? = -60) -> RoundRecording {
        RoundRecording(game: "screamer", duration: game.duration, levels: levels,
                       calibration: SensorCalibration(microphone: noiseFloor.map { MicrophoneCalibration(pcm: "default", noiseFloorDBFS: $0) }))
    }

    @Test func silenceScoresZero() {
        #expect(game.score(round(Synthetic.levels(seconds: 5, rms: LevelMeter.silenceFloor))).score == 0)
    }

    @Test func aQuietRoomScoresZeroAtItsNoiseFloor() {
        // A noisy room: floor −40 dBFS; its own noise, even 5 dB above the floor, scores nothing.
        #expect(game.score(round(Synthetic.levels(seconds: 5, rms: -38), noiseFloor: -40)).score == 0)
        // The same level in a quiet room is a (quiet) voice.
        #expect(game.score(round(Synthetic.levels(seconds: 5, rms: -38), noiseFloor: -70)).score > 0)
    }

    @Test func louderScoresHigher() {
        let scores = [-50.0, -35, -20, -10, -6, -3].map { game.score(round(Synthetic.levels(seconds: 5, rms: $0))).score }
        #expect(scores == scores.sorted())
        #expect(Set(scores).count == scores.count, "every step louder must score more: \(scores)")
    }

    @Test func fullScaleScoresOneThousand() {
        // A full-scale sine: RMS −3.01 dBFS, which the sine reference counts as 0 dB.
        let score = game.score(round(Synthetic.levels(seconds: 5, rms: -3.0103)))
        #expect(score.score == 1000)
        #expect(score.details["loudest_db"] == 0)
    }

    @Test func followsLudursCurve() {
        #expect(abs(Screamer.ludurCurve(0) - 1000) < 1.5)
        #expect(abs(Screamer.ludurCurve(-120) - 0.7746) < 1e-12)
        // Half way through the stretched range: L = −60 gives v = 0.7746 · 10^(31.11 / 20).
        let expected = 0.7746 * pow(10, (60 / 1.92869) / 20)
        #expect(abs(Screamer.ludurCurve(-60) - expected) < 1e-9)
    }

    @Test func oneLoudWindowIsEnough() {
        var levels = Synthetic.levels(seconds: 5, rms: -70)
        levels[40].rmsDBFS = -9
        levels[40].peakDBFS = -6
        let single = game.score(round(levels)).score
        #expect(single == game.score(round(Synthetic.levels(seconds: 5, rms: -9))).score)
        #expect(single > 300)
    }

    @Test func aForgedNoiseFloorCannotStretchTheScale() {
        let honest = game.score(round(Synthetic.levels(seconds: 5, rms: -30), noiseFloor: -90)).score
        let forged = game.score(round(Synthetic.levels(seconds: 5, rms: -30), noiseFloor: -400)).score
        #expect(forged == honest)
    }

    /// Audio written to a raw file, read back through the file-backed microphone, then scored.
    @Test func scoresARecordedShoutAboveARecordedRoom() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-screamer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SeededGenerator(state: 3)
        func write(_ name: String, amplitude: (Int) -> Double) throws -> [LevelSample] {
            let samples = (0..<(16_000 * 5)).map { index -> Int16 in
                let noise = Double(Int.random(in: -30...30, using: &generator))
                return Int16(clamping: Int(amplitude(index) * sin(Double(index) * 0.31) + noise))
            }
            let url = directory.appendingPathComponent(name)
            try samples.withUnsafeBytes { Data($0) }.write(to: url)
            return try RawAudioFile(path: url.path).allLevels()
        }
        let room = try write("room.raw") { _ in 0 }
        let talk = try write("talk.raw") { $0 > 16_000 && $0 < 48_000 ? 1500 : 0 }
        let shout = try write("shout.raw") { $0 > 16_000 && $0 < 48_000 ? 20_000 : 0 }
        let floor = try #require(MicrophoneCalibration.measure(pcm: "file", levels: room))
        func score(_ levels: [LevelSample]) -> Int {
            game.score(RoundRecording(game: "screamer", duration: 5, levels: levels, calibration: SensorCalibration(microphone: floor))).score
        }
        #expect(score(room) == 0)
        #expect(score(talk) > 0)
        #expect(score(shout) > score(talk))
    }
}
