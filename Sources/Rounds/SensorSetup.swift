import Glibc
import Sensors

/// Where the sensors are: the CLI's sensor options as a value (an agent's config file holds one).
///
/// In JSON the keys are snake_case (`iio_root`, `accel_file`, …); every key may be left out and
/// then takes the default the CLI has. A value decoded from a file is not checked until
/// ``validate()``.
public struct SensorSetup: Codable, Sendable, Hashable {
    /// The IIO sysfs folder to look for accelerometers in.
    public var iioRoot: String
    /// The folder of the IIO device nodes (`iio:deviceN`).
    public var iioDeviceDirectory: String
    /// The accelerometer, by IIO id (`iio:device0`) or chip name (`adxl345`); nil: the first found.
    public var accelerometer: String?
    /// How the chip is mounted, as ``AxisOrientation`` reads it (`x,y,z`, `-y,x,z`).
    public var orientation: String
    /// Accelerometer samples per second when polling sysfs; more than 0, at most 10000.
    public var rate: Double
    /// Read the accelerometer through its IIO buffer (`/dev/iio:deviceN`) instead of polling.
    public var buffered: Bool
    /// The ALSA PCM to capture from (see `arecord -L`).
    public var pcm: String
    /// A JSON Lines file of accelerometer samples to read instead of a device.
    public var accelFile: String?
    /// A headerless S16_LE mono 16 kHz file to read instead of a microphone.
    public var audioFile: String?
    /// The sensor calibration file; nil: ``CalibrationStore``'s default path.
    public var calibration: String?

    /// Fastest polling rate accepted, samples per second.
    public static let maximumRate = 10_000.0

    public init(iioRoot: String = IIODeviceTree.systemRoot, iioDeviceDirectory: String = "/dev", accelerometer: String? = nil,
                orientation: String = "x,y,z", rate: Double = 100, buffered: Bool = false, pcm: String = "default",
                accelFile: String? = nil, audioFile: String? = nil, calibration: String? = nil) {
        self.iioRoot = iioRoot
        self.iioDeviceDirectory = iioDeviceDirectory
        self.accelerometer = accelerometer
        self.orientation = orientation
        self.rate = rate
        self.buffered = buffered
        self.pcm = pcm
        self.accelFile = accelFile
        self.audioFile = audioFile
        self.calibration = calibration
    }

    /// The fields, by their JSON keys.
    public enum Field: String, CodingKey, CaseIterable, Sendable {
        case iioRoot = "iio_root", iioDeviceDirectory = "iio_device_directory", accelerometer, orientation, rate, buffered, pcm
        case accelFile = "accel_file", audioFile = "audio_file", calibration

        /// The command-line option that sets the field, e.g. `--iio-root`.
        public var optionName: String { "--" + rawValue.replacingUnderscores() }
    }

    /// Throws, naming the field, when a value cannot work: an orientation that is not three
    /// distinct axes, a rate that is not a number in 0 < rate ≤ 10000, an empty folder, name or
    /// path.
    public func validate() throws(SensorSetupError) {
        guard AxisOrientation(orientation) != nil else {
            throw SensorSetupError(field: .orientation, value: orientation, problem: "is not three distinct axes such as x,y,z or -y,x,z")
        }
        // Written so that NaN fails too: every comparison with NaN is false.
        guard rate > 0, rate <= Self.maximumRate else {
            throw SensorSetupError(field: .rate, value: "\(rate)", problem: "must be more than 0 and at most \(Int(Self.maximumRate)) samples per second")
        }
        let texts: [(Field, String?)] = [
            (.iioRoot, iioRoot), (.iioDeviceDirectory, iioDeviceDirectory), (.accelerometer, accelerometer), (.pcm, pcm),
            (.accelFile, accelFile), (.audioFile, audioFile), (.calibration, calibration),
        ]
        for case let (field, text?) in texts where text.isEmpty {
            throw SensorSetupError(field: field, value: "\"\"", problem: "is empty: leave it out for the default")
        }
    }

    /// The IIO devices this setup looks in.
    public var tree: IIODeviceTree { IIODeviceTree(root: iioRoot, deviceDirectory: iioDeviceDirectory) }

    /// The calibration file this setup reads and writes.
    public var calibrationStore: CalibrationStore { CalibrationStore(path: calibration) }

    /// The name the microphone's calibration is stored under: `file` for an audio file, else the PCM.
    public var microphoneName: String { audioFile == nil ? pcm : "file" }

    /// The accelerometer to read, or why there is none. `paced`: a file delivers its samples at
    /// their recorded pace (as a live device would) rather than all at once.
    public func accelerometerInput(paced: Bool = true) -> Result<AccelerometerInput, SensorError> {
        if let accelFile {
            if let problem = Self.unreadable(accelFile) { return .failure(problem) }
            return .success(AccelerometerInput(label: "file \(accelFile)", id: "file") {
                SampleFile(path: accelFile).accelerationStream(paced: paced)
            })
        }
        do {
            let device = try tree.accelerometer(named: accelerometer)
            let axes = AxisOrientation(orientation) ?? .identity
            if buffered {
                let capture = BufferedAccelerometer(device: device, orientation: axes, samplingFrequency: nil)
                return .success(AccelerometerInput(label: "\(device.chipName) (\(device.id), buffered)", id: device.id) { capture.samples() })
            }
            let polled = PolledAccelerometer(device: device, rate: rate, orientation: axes)
            return .success(AccelerometerInput(label: "\(device.chipName) (\(device.id), polled at \(rate) Hz)", id: device.id) { polled.samples() })
        } catch {
            return .failure(error)
        }
    }

    /// The microphone to read, or why there is none (the PCM is opened and closed once to find
    /// out). `paced`: a file delivers its windows in real time rather than all at once.
    public func microphoneInput(paced: Bool = true) -> Result<MicrophoneInput, SensorError> {
        if let audioFile {
            if let problem = Self.unreadable(audioFile) { return .failure(problem) }
            return .success(MicrophoneInput(label: "file \(audioFile)", pcm: microphoneName) {
                RawAudioFile(path: audioFile, paced: paced).levels()
            })
        }
        let microphone = Microphone(pcmName: pcm)
        do {
            let rate = try microphone.probe()
            return .success(MicrophoneInput(label: "ALSA \(pcm) at \(rate) Hz", pcm: pcm) { microphone.levels() })
        } catch {
            return .failure(error)
        }
    }
}

extension SensorSetup {
    /// Why the recording at `path` cannot be read, or nil when it can (checked before a round,
    /// so a wrong path is reported before a countdown, not after it).
    private static func unreadable(_ path: String) -> SensorError? {
        guard access(path, R_OK) != 0 else { return nil }
        let code = errno
        return code == ENOENT ? .recordingMissing(path: path) : .io(path: path, operation: "open", errno: code)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Field.self)
        let defaults = SensorSetup()
        self.init(
            iioRoot: try container.decodeIfPresent(String.self, forKey: .iioRoot) ?? defaults.iioRoot,
            iioDeviceDirectory: try container.decodeIfPresent(String.self, forKey: .iioDeviceDirectory) ?? defaults.iioDeviceDirectory,
            accelerometer: try container.decodeIfPresent(String.self, forKey: .accelerometer),
            orientation: try container.decodeIfPresent(String.self, forKey: .orientation) ?? defaults.orientation,
            rate: try container.decodeIfPresent(Double.self, forKey: .rate) ?? defaults.rate,
            buffered: try container.decodeIfPresent(Bool.self, forKey: .buffered) ?? defaults.buffered,
            pcm: try container.decodeIfPresent(String.self, forKey: .pcm) ?? defaults.pcm,
            accelFile: try container.decodeIfPresent(String.self, forKey: .accelFile),
            audioFile: try container.decodeIfPresent(String.self, forKey: .audioFile),
            calibration: try container.decodeIfPresent(String.self, forKey: .calibration)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Field.self)
        try container.encode(iioRoot, forKey: .iioRoot)
        try container.encode(iioDeviceDirectory, forKey: .iioDeviceDirectory)
        try container.encodeIfPresent(accelerometer, forKey: .accelerometer)
        try container.encode(orientation, forKey: .orientation)
        try container.encode(rate, forKey: .rate)
        try container.encode(buffered, forKey: .buffered)
        try container.encode(pcm, forKey: .pcm)
        try container.encodeIfPresent(accelFile, forKey: .accelFile)
        try container.encodeIfPresent(audioFile, forKey: .audioFile)
        try container.encodeIfPresent(calibration, forKey: .calibration)
    }
}

/// A ``SensorSetup`` field whose value cannot work.
public struct SensorSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: SensorSetup.Field
    /// The value as given.
    public var value: String
    /// What is wrong, as words that follow the field and value: `must be more than 0 …`.
    public var problem: String

    public init(field: SensorSetup.Field, value: String, problem: String) {
        self.field = field
        self.value = value
        self.problem = problem
    }

    public var description: String { "Sensor setup: \(field.rawValue) \(value) \(problem)." }
}

extension String {
    /// `accel_file` → `accel-file`.
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
