import Foundation
import Rounds
import Sensors
import Testing

/// The sensor setup as an agent's config file holds it.
struct SensorSetupTests {
    @Test func roundTripsThroughJSON() throws {
        let setup = SensorSetup(iioRoot: "/tmp/iio", iioDeviceDirectory: "/tmp/dev", accelerometer: "adxl345", orientation: "-y,x,z",
                                rate: 50, buffered: true, pcm: "hw:1,0", accelFile: "a.jsonl", audioFile: "a.raw", calibration: "c.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(setup), as: UTF8.self)
        #expect(text == #"{"accel_file":"a.jsonl","accelerometer":"adxl345","audio_file":"a.raw","buffered":true,"calibration":"c.json","#
            + #""iio_device_directory":"\/tmp\/dev","iio_root":"\/tmp\/iio","orientation":"-y,x,z","pcm":"hw:1,0","rate":50}"#)
        #expect(try JSONDecoder().decode(SensorSetup.self, from: Data(text.utf8)) == setup)
        #expect(try JSONDecoder().decode(SensorSetup.self, from: encoder.encode(SensorSetup())) == SensorSetup())
    }

    @Test func leftOutKeysTakeTheCommandLineDefaults() throws {
        let setup = try JSONDecoder().decode(SensorSetup.self, from: Data(#"{"pcm":"hw:2,0","accel_file":"shake.jsonl"}"#.utf8))
        #expect(setup == SensorSetup(pcm: "hw:2,0", accelFile: "shake.jsonl"))
        #expect(setup.iioRoot == "/sys/bus/iio/devices" && setup.iioDeviceDirectory == "/dev")
        #expect(setup.orientation == "x,y,z" && setup.rate == 100 && !setup.buffered && setup.accelerometer == nil)
        #expect(try JSONDecoder().decode(SensorSetup.self, from: Data("{}".utf8)) == SensorSetup())
    }

    @Test func aValueOfTheWrongTypeIsADecodingError() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SensorSetup.self, from: Data(#"{"rate":"fast"}"#.utf8))
        }
    }

    @Test func theDefaultsAreValid() throws {
        try SensorSetup().validate()
        try SensorSetup(orientation: "-Y, x, +z", rate: 10_000).validate()
    }

    @Test(arguments: [
        (SensorSetup(orientation: "x,x,z"), SensorSetup.Field.orientation, "orientation x,x,z is not three distinct axes"),
        (SensorSetup(orientation: "up"), .orientation, "orientation up is not"),
        (SensorSetup(rate: 0), .rate, "rate 0.0 must be more than 0 and at most 10000"),
        (SensorSetup(rate: .nan), .rate, "rate nan must be"),
        (SensorSetup(rate: 10_001), .rate, "rate 10001.0 must be"),
        (SensorSetup(iioRoot: ""), .iioRoot, "iio_root \"\" is empty"),
        (SensorSetup(iioDeviceDirectory: ""), .iioDeviceDirectory, "iio_device_directory \"\" is empty"),
        (SensorSetup(accelerometer: ""), .accelerometer, "accelerometer \"\" is empty"),
        (SensorSetup(pcm: ""), .pcm, "pcm \"\" is empty"),
        (SensorSetup(accelFile: ""), .accelFile, "accel_file \"\" is empty"),
        (SensorSetup(audioFile: ""), .audioFile, "audio_file \"\" is empty"),
        (SensorSetup(calibration: ""), .calibration, "calibration \"\" is empty"),
    ])
    func validationNamesTheField(_ setup: SensorSetup, _ field: SensorSetup.Field, _ message: String) {
        let error = #expect(throws: SensorSetupError.self) { try setup.validate() }
        #expect(error?.field == field)
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "no error")")
    }

    @Test func fieldsNameTheirCommandLineOptions() {
        #expect(SensorSetup.Field.allCases.map(\.optionName) == [
            "--iio-root", "--iio-device-directory", "--accelerometer", "--orientation", "--rate", "--buffered", "--pcm",
            "--accel-file", "--audio-file", "--calibration",
        ])
    }

    @Test func theCalibrationStoreIsTheOneNamed() {
        #expect(SensorSetup(calibration: "/tmp/c.json").calibrationStore.path == "/tmp/c.json")
        #expect(SensorSetup().calibrationStore.path == CalibrationStore().path)
    }
}
