import Foundation
import SystemSupport

/// Sample streams saved as JSON Lines, as `nearplay sensors --json` writes them, for tests and
/// demos:
///
/// ```
/// {"sensor":"accel","t":0.02,"x":0.1,"y":-0.2,"z":9.8}
/// {"sensor":"mic","t":0.05,"rms_dbfs":-42.1,"peak_dbfs":-30.5,"overruns":0}
/// ```
///
/// A line without `sensor` is an accelerometer sample if it has `x`, a level if it has
/// `rms_dbfs`; blank lines are skipped; a bad line is an error naming its line number.
public struct SampleFile: Sendable {
    public var path: String

    public init(path: String) { self.path = path }

    /// The accelerometer samples of the file, in file order.
    public func accelerations() throws(SensorError) -> [AccelerationSample] {
        try lines(sensor: "accel", as: AccelerationSample.self)
    }

    /// The microphone levels of the file, in file order.
    public func levels() throws(SensorError) -> [LevelSample] {
        try lines(sensor: "mic", as: LevelSample.self)
    }

    /// The accelerations as a stream, delivered at their recorded pace when `paced`.
    public func accelerationStream(paced: Bool) -> SensorStream<AccelerationSample> {
        let file = self
        return BlockingProducer.stream(name: "nearplay.accel.file") { stop, emit in
            let samples = try file.accelerations()
            let start = monotonicSeconds()
            let first = samples.first?.time ?? 0
            guard paced else { return emit(samples) }
            for sample in samples {
                if !stop.sleep(seconds: start + (sample.time - first) - monotonicSeconds()) { return }
                emit([sample])
            }
        }
    }

    private struct Kind: Decodable {
        var sensor: String?
        var x: Double?
        var rms_dbfs: Double?

        var name: String? { sensor ?? (x != nil ? "accel" : rms_dbfs != nil ? "mic" : nil) }
    }

    private func lines<Sample: Decodable>(sensor: String, as type: Sample.Type) throws(SensorError) -> [Sample] {
        let bytes = try Sysfs.readWholeBytes(path)
        let decoder = JSONDecoder()
        var samples: [Sample] = []
        // Split on the byte 0x0A, not on Character "\n": "\r\n" is one Character in Swift, so a
        // CRLF file would be one line.
        for (number, rawLine) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.last == 0x0D ? rawLine.dropLast() : rawLine
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { continue }
            let data = Data(line)
            do {
                let kind = try decoder.decode(Kind.self, from: data)
                guard kind.name == sensor || kind.name == nil else { continue }
                samples.append(try decoder.decode(Sample.self, from: data))
            } catch {
                throw .malformedRecording(path: path, line: number + 1, reason: "not a \(sensor) sample (\(Self.explain(error)))")
            }
        }
        return samples
    }

    /// A decoding error as a few words (which field, what was wrong), for messages.
    static func explain(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted: "not JSON"
        default: "\(error)"
        }
    }
}

extension Sysfs {
    /// A whole (possibly large) file.
    static func readWholeBytes(_ path: String) throws(SensorError) -> [UInt8] {
        let fd = try SensorError.catching(try SystemCall.open(path, O_RDONLY))
        defer { SystemCall.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try SensorError.catching(try SystemCall.read(fd, into: &chunk, path: path))
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }
}
