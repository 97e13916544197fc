/// The microphone: ALSA capture of S16_LE mono, delivered as levels per window.
///
/// Each stream opens the PCM on a thread of its own, which alone owns the handle and makes the
/// blocking reads (waiting at most 200 ms at a time, so that a stalled device cannot keep it
/// from stopping); the PCM is closed when the consumer stops iterating.
public struct Microphone: Sendable {
    /// An ALSA PCM name: `default`, `hw:1,0`, `plughw:CARD=Device`, or one from a config file.
    public var pcmName: String
    /// The rate asked for; the device may agree to another (see ``LevelSample`` times).
    public var preferredRate: Int
    public var windowSeconds: Double

    public init(pcmName: String = "default", preferredRate: Int = 16_000, windowSeconds: Double = 0.05) {
        self.pcmName = pcmName
        self.preferredRate = preferredRate
        self.windowSeconds = windowSeconds
    }

    /// Opens and closes the PCM once: throws the error a capture would meet, returns the rate
    /// it negotiated.
    public func probe() throws(SensorError) -> Int {
        let capture = try ALSACapture(pcmName: pcmName, preferredRate: preferredRate, periodSeconds: windowSeconds)
        defer { capture.close() }
        return capture.sampleRate
    }

    /// Levels, one per window, until the consumer stops iterating, the PCM ends, or `frameLimit`
    /// frames were read.
    public func levels(frameLimit: Int? = nil) -> SensorStream<LevelSample> {
        let microphone = self
        return BlockingProducer.stream(name: "nearplay.alsa.capture") { stop, emit in
            let capture = try ALSACapture(pcmName: microphone.pcmName, preferredRate: microphone.preferredRate,
                                          periodSeconds: microphone.windowSeconds)
            defer { capture.close() }
            var meter = LevelMeter(sampleRate: capture.sampleRate, windowSeconds: microphone.windowSeconds)
            var remaining = frameLimit ?? .max
            var buffer = [Int16](repeating: 0, count: max(capture.periodFrames, meter.windowFrames))
            while !stop.isRequested, remaining > 0 {
                let count = min(buffer.count, remaining)
                let result: Result<Int, SensorError> = buffer.withUnsafeMutableBufferPointer { pointer in
                    Result { () throws(SensorError) in
                        try capture.read(into: UnsafeMutableBufferPointer(rebasing: pointer[0..<count]))
                    }
                }
                let frames = try result.get()
                if frames == 0 { return }
                if frames < 0 { continue }
                remaining -= frames
                var levels: [LevelSample] = []
                buffer.withUnsafeBufferPointer { pointer in
                    meter.add(UnsafeBufferPointer(rebasing: pointer[0..<frames]), overruns: capture.overruns) {
                        levels.append($0)
                    }
                }
                emit(levels)
            }
        }
    }
}
