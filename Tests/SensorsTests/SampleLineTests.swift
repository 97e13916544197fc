import Foundation
import Testing
import Sensors

struct SampleLineTests {
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
