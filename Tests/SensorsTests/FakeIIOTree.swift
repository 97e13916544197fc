import Foundation
@testable import Sensors
import TestSupport

/// A fake `/sys/bus/iio/devices` in a temporary folder, with device nodes (FIFOs) in a `dev`
/// folder beside it.
struct FakeIIOTree {
    let directory: TemporaryFolder
    var root: String { directory.path + "/sys" }
    var deviceDirectory: String { directory.path + "/dev" }
    var tree: IIODeviceTree { IIODeviceTree(root: root, deviceDirectory: deviceDirectory) }

    init() throws {
        directory = try TemporaryFolder("iio")
        try FileManager.default.createDirectory(atPath: directory.path + "/sys", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/dev", withIntermediateDirectories: true)
    }

    /// An ADXL345-like accelerometer: shared scale, per-channel offset, a frequency list.
    func addAccelerometer(_ id: String = "iio:device0", name: String = "adxl345", raw: (Int, Int, Int) = (10, -20, 256),
                          scale: String = "0.038300", offsets: (String, String, String)? = nil) throws {
        try write("\(id)/name", name)
        try write("\(id)/in_accel_x_raw", "\(raw.0)")
        try write("\(id)/in_accel_y_raw", "\(raw.1)")
        try write("\(id)/in_accel_z_raw", "\(raw.2)")
        try write("\(id)/in_accel_scale", scale)
        if let offsets {
            try write("\(id)/in_accel_x_offset", offsets.0)
            try write("\(id)/in_accel_y_offset", offsets.1)
            try write("\(id)/in_accel_z_offset", offsets.2)
        }
        try write("\(id)/sampling_frequency", "100.000000")
        try write("\(id)/sampling_frequency_available", "6.250000 12.500000 25.000000 50.000000 100.000000")
    }

    /// Scan elements and a buffer for `id`, with the given `_type` for x, y and z, an extra
    /// gyroscope channel that must end up disabled, and optionally a timestamp.
    func addBuffer(_ id: String = "iio:device0", accelType: String, timestamp: Bool) throws {
        for (index, axis) in ["x", "y", "z"].enumerated() {
            try write("\(id)/scan_elements/in_accel_\(axis)_en", "0")
            try write("\(id)/scan_elements/in_accel_\(axis)_index", "\(index)")
            try write("\(id)/scan_elements/in_accel_\(axis)_type", accelType)
        }
        try write("\(id)/scan_elements/in_anglvel_x_en", "1")
        try write("\(id)/scan_elements/in_anglvel_x_index", "4")
        try write("\(id)/scan_elements/in_anglvel_x_type", "le:s16/16>>0")
        if timestamp {
            try write("\(id)/scan_elements/in_timestamp_en", "0")
            try write("\(id)/scan_elements/in_timestamp_index", "5")
            try write("\(id)/scan_elements/in_timestamp_type", "le:s64/64>>0")
        }
        try write("\(id)/buffer/length", "0")
        try write("\(id)/buffer/enable", "0")
        guard mkfifo(deviceDirectory + "/" + id, 0o600) == 0 else { throw POSIXError(.EEXIST) }
    }

    func write(_ relative: String, _ text: String) throws {
        try directory.write(text + "\n", to: "sys/" + relative, atomically: true)
    }

    func read(_ relative: String) throws -> String {
        try directory.read("sys/" + relative).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
