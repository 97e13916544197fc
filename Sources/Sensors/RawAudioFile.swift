import Glibc
import SystemSupport

/// A microphone fed from a file of headerless S16_LE mono audio, for tests and demos.
public struct RawAudioFile: Sendable {
    public var path: String
    public var sampleRate: Int
    public var windowSeconds: Double
    /// When true, windows are delivered in real time (as a microphone would); otherwise as fast
    /// as they can be read.
    public var paced: Bool

    public init(path: String, sampleRate: Int = 16_000, windowSeconds: Double = 0.05, paced: Bool = false) {
        self.path = path
        self.sampleRate = sampleRate
        self.windowSeconds = windowSeconds
        self.paced = paced
    }

    /// Every window of the file at once. Throws when the file has an odd number of bytes.
    public func allLevels() throws(SensorError) -> [LevelSample] {
        var levels: [LevelSample] = []
        try read(stop: StopSignal()) { levels += $0 }
        return levels
    }

    /// The file's windows as a stream that ends at the end of the file.
    public func levels() -> SensorStream<LevelSample> {
        let file = self
        return BlockingProducer.stream(name: "nearplay.audio.file") { stop, emit in
            try file.read(stop: stop, emit: emit)
        }
    }

    private func read(stop: StopSignal, emit: ([LevelSample]) -> Void) throws(SensorError) {
        let fd = try SensorError.catching(try SystemCall.open(path, O_RDONLY))
        defer { SystemCall.close(fd) }
        var meter = LevelMeter(sampleRate: sampleRate, windowSeconds: windowSeconds)
        var bytes = [UInt8](repeating: 0, count: meter.windowFrames * 2)
        var carried = 0
        var total = 0
        let start = monotonicSeconds()
        while !stop.isRequested {
            let n = try SensorError.catching(try SystemCall.read(fd, into: &bytes, from: carried, path: path))
            if n <= 0 { break }
            total += n
            let available = carried + n
            let frames = available / 2
            let samples = bytes.withUnsafeBytes { raw in
                (0..<frames).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
            }
            carried = available - frames * 2
            if carried == 1 { bytes[0] = bytes[available - 1] }
            var completed: [LevelSample] = []
            samples.withUnsafeBufferPointer { buffer in
                meter.add(buffer) { completed.append($0) }
            }
            for level in completed {
                if paced, !stop.sleep(seconds: start + level.time - monotonicSeconds()) { return }
                emit([level])
            }
        }
        if total % 2 != 0 {
            throw .malformedAudioFile(path: path, byteOffset: total - 1, reason: "\(total) bytes is not a whole number of 16-bit samples")
        }
    }
}
