import Sensors

/// An accelerometer found and ready to read: a device or a file.
public struct AccelerometerInput: Sendable {
    /// What it is, for people: `adxl345 (iio:device0, buffered)`, `file shake.jsonl`.
    public var label: String
    /// The id its calibration is stored under: the IIO device id, or `file`.
    public var id: String
    /// Starts reading; each call opens a stream of its own.
    public var samples: @Sendable () -> SensorStream<AccelerationSample>

    public init(label: String, id: String, samples: @escaping @Sendable () -> SensorStream<AccelerationSample>) {
        self.label = label
        self.id = id
        self.samples = samples
    }
}

/// A microphone found and ready to read: an ALSA PCM or a file.
public struct MicrophoneInput: Sendable {
    /// What it is, for people: `ALSA default at 16000 Hz`, `file shout.raw`.
    public var label: String
    /// The name its calibration is stored under: the PCM, or `file`.
    public var pcm: String
    /// Starts reading; each call opens a stream of its own.
    public var levels: @Sendable () -> SensorStream<LevelSample>

    public init(label: String, pcm: String, levels: @escaping @Sendable () -> SensorStream<LevelSample>) {
        self.label = label
        self.pcm = pcm
        self.levels = levels
    }
}
