import Foundation
import Testing
@testable import Minigames
@testable import nearplay
import Sensors

struct SensorsOutputTests {
    /// What `nearplay sensors --json` writes is what `--accel-file` and SampleFile read.
    @Test func jsonLinesReadBackAsRecordings() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let sample = AccelerationSample(time: 1.25, x: 0.5, y: -1, z: 9.75)
        let level = LevelSample(time: 0.05, rmsDBFS: -40.5, peakDBFS: -30, overruns: 2)
        let lines = [
            String(decoding: try encoder.encode(TaggedSample(sensor: "accel", sample: sample)), as: UTF8.self),
            String(decoding: try encoder.encode(TaggedSample(sensor: "mic", sample: level)), as: UTF8.self),
        ]
        #expect(lines[0] == #"{"sensor":"accel","t":1.25,"x":0.5,"y":-1,"z":9.75}"#)
        #expect(lines[1] == #"{"overruns":2,"peak_dbfs":-30,"rms_dbfs":-40.5,"sensor":"mic","t":0.05}"#)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-out-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
        #expect(try SampleFile(path: url.path).accelerations() == [sample])
        #expect(try SampleFile(path: url.path).levels() == [level])
    }
}

struct RoundRecorderTests {
    /// A consumer that fell behind receives samples late; their times stay where the sensor put
    /// them, relative to the least-delayed sample.
    @Test func lateDeliveryDoesNotShiftSamples() {
        let start = monotonicSeconds()
        let recorder = RoundRecorder(start: start)
        // The sensor clock reads 1000 s at the round start; the first sample arrives on time.
        recorder.add(AccelerationSample(time: 1000 + (monotonicSeconds() - start), x: 0, y: 0, z: 9.8))
        usleep(200_000)
        // This one was measured 150 ms after the first but is delivered 200 ms after it.
        let first = 1000 + (monotonicSeconds() - start) - 0.2
        recorder.add(AccelerationSample(time: first + 0.15, x: 1, y: 0, z: 9.8))
        let recording = recorder.recording(game: "shaker", plan: RoundPlan(duration: 10), calibration: SensorCalibration())
        #expect(recording.accelerations.count == 2)
        let gap = recording.accelerations[1].time - recording.accelerations[0].time
        #expect(abs(gap - 0.15) < 0.02, "samples 150 ms apart stay 150 ms apart, got \(gap)")
        #expect(recording.accelerations[0].time >= 0 && recording.accelerations[0].time < 0.05)
    }
}
