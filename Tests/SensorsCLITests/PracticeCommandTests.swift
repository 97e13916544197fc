import Foundation
import Testing
@testable import Minigames
@testable import nearplay
import Sensors

/// The `practice` and `calibrate sensors` commands, end to end on recorded inputs.
struct PracticeCommandTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// 5 s of headerless S16_LE: quiet, then a loud second, then quiet.
    func writeShout() throws -> String {
        let samples = (0..<(16_000 * 5)).map { index -> Int16 in
            let amplitude = index >= 16_000 && index < 32_000 ? 20_000.0 : 20.0
            return Int16(amplitude * sin(Double(index) * 0.31))
        }
        let url = folder.appendingPathComponent("shout.raw")
        try samples.withUnsafeBytes { Data($0) }.write(to: url)
        return url.path
    }

    @Test func aScreamerRoundFromARecordingScoresWhatTheVerifierRecomputes() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let audio = try writeShout()
        let saved = folder.appendingPathComponent("round.json").path
        let command = try PracticeCommand.parseAsRoot([
            "screamer", "--audio-file", audio, "--countdown", "0", "--json",
            "--calibration", folder.appendingPathComponent("none.json").path, "--save-recording", saved,
        ]) as! PracticeCommand
        try await command.run()

        let recording = try JSONDecoder().decode(RoundRecording.self, from: Data(contentsOf: URL(fileURLWithPath: saved)))
        #expect(recording.game == "screamer")
        // A round from a recording runs on the recording's clock: all 5 s of 50 ms windows, however
        // busy the machine.
        #expect(recording.levels.count >= 99 && recording.levels.count <= 101, "5 s of 50 ms windows, got \(recording.levels.count)")
        #expect(recording.levels.allSatisfy { $0.time >= 0 })
        let score = try ScoreVerifier().verify(claimedScore: Screamer().score(recording).score, recording: recording)
        #expect(score.score > 500)
        #expect(throws: ScoreRefusal.self) { try ScoreVerifier().verify(claimedScore: 1000, recording: recording) }
    }

    @Test func calibrationStoresTheNoiseFloorOfTheRecording() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let quiet = (0..<16_000).map { Int16(100 * sin(Double($0) * 0.2)) }
        let audio = folder.appendingPathComponent("room.raw")
        try quiet.withUnsafeBytes { Data($0) }.write(to: audio)
        let stored = folder.appendingPathComponent("calibration.json").path
        let command = try CalibrateSensors.parseAsRoot([
            "--audio-file", audio.path, "--iio-root", folder.path, "--seconds", "0.5", "--calibration", stored,
        ]) as! CalibrateSensors
        try await command.run()
        let calibration = try CalibrationStore(path: stored).load()
        let floor = try #require(calibration.microphone?.noiseFloorDBFS)
        // A sine of amplitude 100: RMS 20·log10(100/√2/32768) = −53.3 dBFS.
        #expect(abs(floor - (-53.3)) < 0.2)
        #expect(calibration.accelerometer == nil)
    }

    /// Only calibrations the score verifier and a lobby accept are stored: a muted microphone is
    /// held at the lowest floor a lobby stores, and a device that moved is not stored at all.
    @Test func calibrationStoresOnlyWhatTheVerifierAccepts() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let audio = folder.appendingPathComponent("muted.raw")
        try Data(count: 32_000).write(to: audio)
        let moving = (0..<100).map { index in
            "{\"t\":\(Double(index) * 0.01),\"x\":\(index % 2 == 0 ? 5.0 : 0.0),\"y\":0,\"z\":9.8}"
        }.joined(separator: "\n")
        let accel = folder.appendingPathComponent("moving.jsonl")
        try moving.write(to: accel, atomically: true, encoding: .utf8)
        let stored = folder.appendingPathComponent("calibration.json").path
        let command = try CalibrateSensors.parseAsRoot([
            "--audio-file", audio.path, "--accel-file", accel.path, "--seconds", "0.5", "--calibration", stored,
        ]) as! CalibrateSensors
        try await command.run()
        let calibration = try CalibrationStore(path: stored).load()
        #expect(calibration.microphone?.noiseFloorDBFS == CalibrationBounds.restingDevice.noiseFloor.lowerBound)
        #expect(calibration.accelerometer == nil, "a device that moved must not be stored as at rest")
    }

    @Test func refusesAnUnknownGameWithTheList() {
        #expect(throws: (any Error).self) { try PracticeCommand.parseAsRoot(["tetris"]) }
        let message = PracticeCommand.fullMessage(for: ValidationErrorProbe.error(for: ["tetris"]))
        #expect(message.contains("screamer, shaker, statue, quickdraw"))
    }
}

enum ValidationErrorProbe {
    static func error(for arguments: [String]) -> any Error {
        do {
            _ = try PracticeCommand.parseAsRoot(arguments)
            return CancellationError()
        } catch {
            return error
        }
    }
}
