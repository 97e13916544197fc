import ArgumentParser
import Sensors

/// Where the sensors are, shared by `sensors`, `calibrate sensors` and `practice`.
struct SensorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The IIO sysfs folder to look for accelerometers in.", valueName: "dir"))
    var iioRoot: String = IIODeviceTree.systemRoot

    @Option(help: ArgumentHelp("The folder of the IIO device nodes.", valueName: "dir"))
    var iioDeviceDirectory: String = "/dev"

    @Option(help: ArgumentHelp("The accelerometer to use, by IIO id (iio:device0) or chip name (adxl345); the first found by default.", valueName: "name"))
    var accelerometer: String?

    // `.unconditional`: an inverted first axis starts with a minus (`--orientation -y,x,z`).
    @Option(parsing: .unconditional, help: ArgumentHelp("How the chip is mounted: the chip axes that are the device's x,y,z, e.g. -y,x,z.", valueName: "axes"))
    var orientation: String = "x,y,z"

    @Option(help: ArgumentHelp("Accelerometer samples per second in polled mode.", valueName: "hz"))
    var rate: Double = 100

    @Flag(help: "Read the accelerometer through its IIO buffer (/dev/iio:deviceN) instead of polling sysfs.")
    var buffered = false

    @Option(help: ArgumentHelp("The ALSA PCM to capture from (see `arecord -L`).", valueName: "name"))
    var pcm: String = "default"

    @Option(help: ArgumentHelp("Read accelerometer samples from this JSON Lines file instead of a device.", valueName: "file"))
    var accelFile: String?

    @Option(help: ArgumentHelp("Read headerless S16_LE mono 16 kHz audio from this file instead of a microphone.", valueName: "file"))
    var audioFile: String?

    @Option(help: ArgumentHelp("The sensor calibration file (default: $XDG_CONFIG_HOME/nearplay/sensor-calibration.json).", valueName: "file"))
    var calibration: String?

    func validate() throws {
        guard AxisOrientation(orientation) != nil else {
            throw ValidationError("--orientation \(orientation) is not three distinct axes such as x,y,z or -y,x,z.")
        }
        guard rate > 0, rate <= 10_000 else {
            throw ValidationError("--rate must be between 0 and 10000 samples per second.")
        }
    }

    var tree: IIODeviceTree { IIODeviceTree(root: iioRoot, deviceDirectory: iioDeviceDirectory) }

    var calibrationStore: CalibrationStore { CalibrationStore(path: calibration) }

    /// The accelerometer to read, or why there is none.
    func accelerometerInput(paced: Bool = true) -> Result<AccelerometerInput, SensorError> {
        if let accelFile {
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

    /// The microphone to read, or why there is none.
    func microphoneInput(paced: Bool = true) -> Result<MicrophoneInput, SensorError> {
        if let audioFile {
            return .success(MicrophoneInput(label: "file \(audioFile)", pcm: "file") {
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

struct AccelerometerInput: Sendable {
    var label: String
    var id: String
    var samples: @Sendable () -> SensorStream<AccelerationSample>
}

struct MicrophoneInput: Sendable {
    var label: String
    var pcm: String
    var levels: @Sendable () -> SensorStream<LevelSample>
}
