import ArgumentParser
import Rounds
import Sensors

/// Where the sensors are, shared by `sensors`, `calibrate sensors` and `practice`: the options
/// of a ``SensorSetup``, which holds the defaults, the checks and the sensor selection.
struct SensorOptions: ParsableArguments {
    private static let defaults = SensorSetup()

    @Option(help: ArgumentHelp("The IIO sysfs folder to look for accelerometers in.", valueName: "dir"))
    var iioRoot: String = SensorOptions.defaults.iioRoot

    @Option(help: ArgumentHelp("The folder of the IIO device nodes.", valueName: "dir"))
    var iioDeviceDirectory: String = SensorOptions.defaults.iioDeviceDirectory

    @Option(help: ArgumentHelp("The accelerometer to use, by IIO id (iio:device0) or chip name (adxl345); the first found by default.", valueName: "name"))
    var accelerometer: String?

    // `.unconditional`: an inverted first axis starts with a minus (`--orientation -y,x,z`).
    @Option(parsing: .unconditional, help: ArgumentHelp("How the chip is mounted: the chip axes that are the device's x,y,z, e.g. -y,x,z.", valueName: "axes"))
    var orientation: String = SensorOptions.defaults.orientation

    @Option(help: ArgumentHelp("Accelerometer samples per second in polled mode.", valueName: "hz"))
    var rate: Double = SensorOptions.defaults.rate

    @Flag(help: "Read the accelerometer through its IIO buffer (/dev/iio:deviceN) instead of polling sysfs.")
    var buffered = false

    @Option(help: ArgumentHelp("The ALSA PCM to capture from (see `arecord -L`).", valueName: "name"))
    var pcm: String = SensorOptions.defaults.pcm

    @Option(help: ArgumentHelp("Read accelerometer samples from this JSON Lines file instead of a device.", valueName: "file"))
    var accelFile: String?

    @Option(help: ArgumentHelp("Read headerless S16_LE mono 16 kHz audio from this file instead of a microphone.", valueName: "file"))
    var audioFile: String?

    @Option(help: ArgumentHelp("The sensor calibration file (default: $XDG_CONFIG_HOME/nearplay/sensor-calibration.json).", valueName: "file"))
    var calibration: String?

    func validate() throws {
        do {
            try setup.validate()
        } catch {
            throw ValidationError("\(error.field.optionName) \(error.value) \(error.problem).")
        }
    }

    var setup: SensorSetup {
        SensorSetup(iioRoot: iioRoot, iioDeviceDirectory: iioDeviceDirectory, accelerometer: accelerometer,
                    orientation: orientation, rate: rate, buffered: buffered, pcm: pcm,
                    accelFile: accelFile, audioFile: audioFile, calibration: calibration)
    }

    var tree: IIODeviceTree { setup.tree }

    var calibrationStore: CalibrationStore { setup.calibrationStore }
}
