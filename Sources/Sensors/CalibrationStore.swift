import Foundation
import SystemSupport

/// The calibration file: a small JSON file, by default
/// `$XDG_CONFIG_HOME/nearplay/sensor-calibration.json` (or `~/.config/nearplay/…`).
public struct CalibrationStore: Sendable {
    public var path: String

    public init(path: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.path = path ?? Self.defaultPath(environment: environment)
    }

    public static func defaultPath(environment: [String: String]) -> String {
        XDGDirectories(environment: environment).configDirectory + "/sensor-calibration.json"
    }

    /// The stored calibration; an empty one when the file does not exist yet.
    public func load() throws(SensorError) -> SensorCalibration {
        guard Sysfs.exists(path) else { return SensorCalibration() }
        let text = String(decoding: try Sysfs.readWholeBytes(path), as: UTF8.self)
        do {
            return try JSONDecoder().decode(SensorCalibration.self, from: Data(text.utf8))
        } catch {
            throw .malformedRecording(path: path, line: 1, reason: "not a sensor calibration (\(SampleFile.explain(error))); delete it and run `nearplay calibrate sensors` again")
        }
    }

    /// Writes the calibration, creating the folder; replaces the file atomically.
    public func save(_ calibration: SensorCalibration) throws(SensorError) {
        let url = URL(fileURLWithPath: path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(calibration).write(to: url, options: .atomic)
        } catch {
            throw .io(path: path, operation: "write", errno: (error as NSError).code == 0 ? EIO : Int32((error as NSError).code))
        }
    }
}
