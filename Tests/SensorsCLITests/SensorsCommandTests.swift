import Foundation
import Testing
@testable import nearplay
import Sensors
import Synchronization

/// Option checks of the sensor commands: every number must be finite and in range, NaN included.
struct SensorOptionValidationTests {
    @Test(arguments: ["nan", "1e300", "inf", "-inf", "0", "-1", "86401"])
    func sensorsRefusesSecondsOutOfRange(_ seconds: String) {
        #expect(throws: (any Error).self) { try SensorsCommand.parseAsRoot(["--audio-file", "a.raw", "--seconds", seconds]) }
    }

    @Test func sensorsAcceptsSecondsInRange() throws {
        let command = try #require(try SensorsCommand.parseAsRoot(["--audio-file", "a.raw", "--seconds", "86400"]) as? SensorsCommand)
        #expect(command.seconds == 86_400)
    }

    @Test(arguments: ["nan", "inf", "0", "-5", "1e300"])
    func everySensorCommandRefusesARateOutOfRange(_ rate: String) {
        #expect(throws: (any Error).self) { try SensorsCommand.parseAsRoot(["--rate", rate]) }
        #expect(throws: (any Error).self) { try CalibrateSensors.parseAsRoot(["--rate", rate]) }
        #expect(throws: (any Error).self) { try PracticeCommand.parseAsRoot(["statue", "--rate", rate]) }
    }

    @Test(arguments: ["nan", "inf", "0.1", "121"])
    func calibrationRefusesSecondsOutOfRange(_ seconds: String) {
        #expect(throws: (any Error).self) { try CalibrateSensors.parseAsRoot(["--seconds", seconds]) }
    }
}

/// `nearplay sensors` on a fake IIO tree whose device node is a FIFO kept open (as a real device
/// is): the command must disable the buffer and restore the channels before it returns.
struct SensorsCommandBufferTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "/nearplay-sensors-cli-\(UUID().uuidString)"
        let device = folder + "/sys/iio:device0"
        var files = [
            "name": "adxl345", "in_accel_x_raw": "1", "in_accel_y_raw": "2", "in_accel_z_raw": "256", "in_accel_scale": "0.0383",
            "scan_elements/in_anglvel_x_en": "1", "scan_elements/in_anglvel_x_index": "3", "scan_elements/in_anglvel_x_type": "le:s16/16>>0",
            "buffer/length": "0", "buffer/enable": "0",
        ]
        for (index, axis) in ["x", "y", "z"].enumerated() {
            files["scan_elements/in_accel_\(axis)_en"] = "0"
            files["scan_elements/in_accel_\(axis)_index"] = "\(index)"
            files["scan_elements/in_accel_\(axis)_type"] = "le:s16/16>>0"
        }
        // A second accelerometer with a malformed scale: reported, and no reason to give up.
        let broken = ["name": "bma220", "in_accel_x_raw": "1", "in_accel_y_raw": "1", "in_accel_z_raw": "1", "in_accel_scale": "0.03x"]
        for (relative, text) in files { try Self.write(text, to: device + "/" + relative) }
        for (relative, text) in broken { try Self.write(text, to: folder + "/sys/iio:device1/" + relative) }
        try FileManager.default.createDirectory(atPath: folder + "/dev", withIntermediateDirectories: true)
        guard mkfifo(folder + "/dev/iio:device0", 0o600) == 0 else { throw POSIXError(.EEXIST) }
    }

    static func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try (text + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    func read(_ relative: String) throws -> String {
        try String(contentsOfFile: folder + "/sys/iio:device0/" + relative, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theBufferIsDisabledWhenTheCommandReturns() async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Holding the FIFO open read-write keeps a writer on it: the reader never sees end of
        // file and sits in its 100 ms poll when the time is up, like on a real device.
        let holder = open(folder + "/dev/iio:device0", O_RDWR | O_NONBLOCK)
        try #require(holder >= 0)
        defer { close(holder) }
        let command = try #require(try SensorsCommand.parseAsRoot([
            "--iio-root", folder + "/sys", "--iio-device-directory", folder + "/dev", "--accelerometer", "iio:device0",
            "--buffered", "--pcm", "nearplay-no-such-pcm", "--seconds", "0.3", "--json",
        ]) as? SensorsCommand)
        try await command.run()
        #expect(try read("buffer/enable") == "0", "the command must not return before the buffer is disabled")
        #expect(try read("buffer/length") == "256")
        #expect(try read("scan_elements/in_accel_x_en") == "0")
        #expect(try read("scan_elements/in_anglvel_x_en") == "1", "channels the command turned off are turned back on")
    }
}

/// The first Ctrl-C asks the command to stop and clean up; a second one exits at once, so a
/// cleanup that hangs can still be killed. (The action is fired directly: a test must not send
/// its own process SIGINT.)
struct InterruptHandlerTests {
    @Test func aSecondInterruptExitsAtOnce() {
        let events = EventLog()
        let handler = InterruptHandler(signals: [], exit: { events.note("exit") }) { events.note("interrupt") }
        handler.action.fire()
        #expect(events.all == ["interrupt"])
        handler.action.fire()
        #expect(events.all == ["interrupt", "exit"])
    }
}

final class EventLog: Sendable {
    private let events = Mutex<[String]>([])

    func note(_ event: String) { events.withLock { $0.append(event) } }

    var all: [String] { events.withLock { $0 } }
}
