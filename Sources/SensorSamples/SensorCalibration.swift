/// What `nearplay calibrate sensors` measured on this device, for the games to use.
public struct SensorCalibration: Hashable, Codable, Sendable {
    public var microphone: MicrophoneCalibration?
    public var accelerometer: AccelerometerCalibration?

    public init(microphone: MicrophoneCalibration? = nil, accelerometer: AccelerometerCalibration? = nil) {
        self.microphone = microphone
        self.accelerometer = accelerometer
    }
}

/// The microphone's level in a quiet room.
public struct MicrophoneCalibration: Hashable, Codable, Sendable {
    /// The PCM it was measured on.
    public var pcm: String
    /// The loudest 50 ms RMS level heard while the room was quiet, in dBFS. Levels at or below
    /// this are noise, not a player.
    public var noiseFloorDBFS: Double

    public init(pcm: String, noiseFloorDBFS: Double) {
        self.pcm = pcm
        self.noiseFloorDBFS = noiseFloorDBFS
    }

    /// Measures the noise floor from levels recorded in a quiet room: the 95th percentile of the
    /// window RMS levels (so one cough does not raise it much), or nil without levels.
    public static func measure(pcm: String, levels: [LevelSample]) -> MicrophoneCalibration? {
        guard !levels.isEmpty else { return nil }
        let sorted = levels.map(\.rmsDBFS).sorted()
        let index = min(sorted.count - 1, Int((Double(sorted.count) * 0.95).rounded(.down)))
        return MicrophoneCalibration(pcm: pcm, noiseFloorDBFS: sorted[index])
    }

    enum CodingKeys: String, CodingKey {
        case pcm, noiseFloorDBFS = "noise_floor_dbfs"
    }
}

/// The accelerometer lying still.
public struct AccelerometerCalibration: Hashable, Codable, Sendable {
    /// The IIO device id it was measured on.
    public var device: String
    /// Mean reading at rest in m/s², device axes: gravity as this chip sees it.
    public var rest: [Double]
    /// Length of ``rest``: the chip's gravity, ideally 9.80665.
    public var gravity: Double
    /// ``gravity`` minus standard gravity: the chip's magnitude offset in m/s².
    public var gravityOffset: Double
    /// Standard deviation of the magnitude at rest in m/s²: the sensor's noise.
    public var noise: Double

    public init(device: String, rest: [Double], gravity: Double, noise: Double) {
        self.device = device
        self.rest = rest
        self.gravity = gravity
        self.gravityOffset = gravity - standardGravity
        self.noise = noise
    }

    /// Measures from samples of a device lying still; nil without samples.
    public static func measure(device: String, samples: [AccelerationSample]) -> AccelerometerCalibration? {
        guard !samples.isEmpty else { return nil }
        let count = Double(samples.count)
        let rest = [samples.map(\.x).reduce(0, +) / count,
                    samples.map(\.y).reduce(0, +) / count,
                    samples.map(\.z).reduce(0, +) / count]
        let magnitudes = samples.map(\.magnitude)
        let meanMagnitude = magnitudes.reduce(0, +) / count
        let variance = magnitudes.map { ($0 - meanMagnitude) * ($0 - meanMagnitude) }.reduce(0, +) / count
        return AccelerometerCalibration(device: device, rest: rest, gravity: meanMagnitude, noise: variance.squareRoot())
    }

    enum CodingKeys: String, CodingKey {
        case device, rest = "rest_ms2", gravity = "gravity_ms2", gravityOffset = "gravity_offset_ms2", noise = "noise_ms2"
    }
}
