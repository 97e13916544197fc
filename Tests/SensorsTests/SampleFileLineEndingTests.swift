import TestSupport
import Testing
@testable import Sensors

struct SampleFileLineEndingTests {
    /// "\r\n" is one Character in Swift; a CRLF file must still be one sample per line.
    @Test func readsCRLFLines() throws {
        let directory = try TemporaryFolder("samples")
        try directory.write("{\"sensor\":\"accel\",\"t\":0.5,\"x\":1,\"y\":2,\"z\":3}\r\n"
            + "{\"sensor\":\"mic\",\"t\":0.05,\"rms_dbfs\":-40,\"peak_dbfs\":-30,\"overruns\":0}\r\n\r\n"
            + "{\"sensor\":\"accel\",\"t\":0.6,\"x\":4,\"y\":5,\"z\":6}\r\n", to: "crlf.jsonl")
        let file = SampleFile(path: directory.path + "/crlf.jsonl")
        #expect(try file.accelerations() == [AccelerationSample(time: 0.5, x: 1, y: 2, z: 3), AccelerationSample(time: 0.6, x: 4, y: 5, z: 6)])
        #expect(try file.levels() == [LevelSample(time: 0.05, rmsDBFS: -40, peakDBFS: -30, overruns: 0)])
    }

    @Test func aBadCRLFLineIsNamedByItsNumber() throws {
        let directory = try TemporaryFolder("samples")
        try directory.write("{\"t\":0.5,\"x\":1,\"y\":2,\"z\":3}\r\n{\"t\":0.6,\"x\":\"four\",\"y\":5,\"z\":6}\r\n", to: "bad.jsonl")
        let path = directory.path + "/bad.jsonl"
        let error = try #require(throws: SensorError.self) { try SampleFile(path: path).accelerations() }
        guard case .malformedRecording(let errorPath, let line, _) = error else {
            Issue.record("expected a malformed recording, got \(error)")
            return
        }
        #expect(errorPath == path)
        #expect(line == 2)
    }
}
