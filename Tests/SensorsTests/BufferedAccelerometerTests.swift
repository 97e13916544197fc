import Foundation
import Synchronization
import Testing
@testable import Sensors

/// Writes bytes into a FIFO once a reader opens it, then keeps it open until `release()` (or
/// 10 s), standing in for the kernel behind `/dev/iio:deviceN`.
final class FIFOWriter: Sendable {
    private let released = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(path: String, chunks: [[UInt8]]) {
        let thread = Thread { [self] in
            defer { finished.store(true, ordering: .releasing) }
            var fd: Int32 = -1
            let deadline = Date().addingTimeInterval(10)
            while fd < 0, Date() < deadline, !released.load(ordering: .acquiring) {
                fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd < 0 { usleep(2_000) }
            }
            guard fd >= 0 else { return }
            defer { close(fd) }
            for chunk in chunks {
                _ = chunk.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
                usleep(1_000)
            }
            while !released.load(ordering: .acquiring), Date() < deadline { usleep(5_000) }
        }
        thread.start()
    }

    /// Lets the writer close its end (the reader then sees end of file).
    func release() { released.store(true, ordering: .releasing) }

    var isFinished: Bool { finished.load(ordering: .acquiring) }
}

/// One buffered-capture case: a `_type` for the three axes, whether the timestamp is enabled,
/// and the scan bytes the kernel would write for x, y, z at `values` and time `nanoseconds`.
struct BufferCase: CustomTestStringConvertible, Sendable {
    var type: String
    var timestamp: Bool
    var scanBytes: Int
    var axisOffsets: [Int]
    var testDescription: String { "\(type)\(timestamp ? " + timestamp" : "")" }

    func scan(_ values: [Int64], nanoseconds: Int64) throws -> [UInt8] {
        let elementType = try ScanElementType(parsing: type)
        var bytes = [UInt8](repeating: 0, count: scanBytes)
        for (axis, value) in values.enumerated() {
            let encoded = encode(value, as: elementType, lowBits: 0b1010_1010)
            bytes.replaceSubrange(axisOffsets[axis]..<(axisOffsets[axis] + encoded.count), with: encoded)
        }
        if timestamp {
            bytes.replaceSubrange((scanBytes - 8)..<scanBytes, with: withUnsafeBytes(of: nanoseconds.littleEndian, Array.init))
        }
        return bytes
    }
}

struct BufferedAccelerometerTests {
    static let cases = [
        BufferCase(type: "le:s12/16>>4", timestamp: true, scanBytes: 16, axisOffsets: [0, 2, 4]),
        BufferCase(type: "be:s16/16>>0", timestamp: true, scanBytes: 16, axisOffsets: [0, 2, 4]),
        BufferCase(type: "le:s32/32>>0", timestamp: false, scanBytes: 12, axisOffsets: [0, 4, 8]),
        BufferCase(type: "be:s10/16>>6", timestamp: false, scanBytes: 6, axisOffsets: [0, 2, 4]),
        BufferCase(type: "le:u8/8>>0", timestamp: true, scanBytes: 16, axisOffsets: [0, 1, 2]),
    ]

    @Test(arguments: cases)
    func decodesScansWrittenIntoTheDeviceNode(_ bufferCase: BufferCase) async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer(scale: "0.5")
        try fake.addBuffer(accelType: bufferCase.type, timestamp: bufferCase.timestamp)
        var bytes: [UInt8] = []
        for index in 0..<40 {
            let values: [Int64] = [Int64(index), 100 - Int64(index), 200]
            bytes += try bufferCase.scan(values, nanoseconds: 1_000_000_000 + Int64(index) * 10_000_000)
        }
        // Chunks that cut scans in half, as reads from a real device may.
        let chunks = stride(from: 0, to: bytes.count, by: 37).map { Array(bytes[$0..<min(bytes.count, $0 + 37)]) }
        let writer = FIFOWriter(path: fake.deviceDirectory + "/iio:device0", chunks: chunks)
        defer { writer.release() }

        let capture = BufferedAccelerometer(device: try fake.tree.accelerometer(), bufferLength: 64)
        var samples: [AccelerationSample] = []
        for try await sample in capture.samples() {
            samples.append(sample)
            if samples.count == 40 { writer.release() }
        }
        try #require(samples.count == 40)
        for (index, sample) in samples.enumerated() {
            #expect(sample.x == Double(index) * 0.5)
            #expect(sample.y == Double(100 - index) * 0.5)
            #expect(sample.z == 100)
            if bufferCase.timestamp {
                #expect(abs(sample.time - (1 + Double(index) * 0.01)) < 1e-9)
            }
        }
        #expect(try fake.read("iio:device0/scan_elements/in_accel_x_en") == "1")
        #expect(try fake.read("iio:device0/scan_elements/in_anglvel_x_en") == "0")
        #expect(try fake.read("iio:device0/buffer/length") == "64")
        #expect(try fake.read("iio:device0/buffer/enable") == "0")
        if bufferCase.timestamp { #expect(try fake.read("iio:device0/scan_elements/in_timestamp_en") == "1") }
    }

    @Test func stoppingTheStreamDisablesTheBuffer() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try fake.addBuffer(accelType: "le:s16/16>>0", timestamp: true)
        let bufferCase = BufferedAccelerometerTests.cases[1]
        let scans = try (0..<50).map { _ in try BufferCase(type: "le:s16/16>>0", timestamp: true, scanBytes: 16, axisOffsets: bufferCase.axisOffsets).scan([1, 2, 3], nanoseconds: 5) }
        let writer = FIFOWriter(path: fake.deviceDirectory + "/iio:device0", chunks: scans)
        defer { writer.release() }
        var received = 0
        for try await _ in BufferedAccelerometer(device: try fake.tree.accelerometer()).samples() {
            received += 1
            if received == 10 { break }
        }
        #expect(received == 10)
        var enable = try fake.read("iio:device0/buffer/enable")
        for _ in 0..<100 where enable != "0" {
            try await Task.sleep(for: .milliseconds(20))
            enable = try fake.read("iio:device0/buffer/enable")
        }
        #expect(enable == "0", "the capture thread must disable the buffer within 2 s of the consumer stopping")
    }

    @Test func namesTheMalformedTypeFile() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try fake.addBuffer(accelType: "le:s12/16>>4", timestamp: false)
        try fake.write("iio:device0/scan_elements/in_accel_y_type", "le:s12/16>>9")
        let capture = BufferedAccelerometer(device: try fake.tree.accelerometer())
        let error = try #require(throws: SensorError.self) { try capture.configureScanElements() }
        guard case .malformedAttribute(let path, let text, _) = error else {
            Issue.record("expected a malformed attribute, got \(error)")
            return
        }
        #expect(path == fake.root + "/iio:device0/scan_elements/in_accel_y_type")
        #expect(text == "le:s12/16>>9")
    }

    @Test func refusesADeviceWithoutABuffer() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        let capture = BufferedAccelerometer(device: try fake.tree.accelerometer())
        #expect(throws: SensorError.self) { try capture.configureScanElements() }
    }

    @Test func aMissingDeviceNodeIsAnErrorNamingIt() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try fake.addBuffer(accelType: "le:s16/16>>0", timestamp: false)
        try FileManager.default.removeItem(atPath: fake.deviceDirectory + "/iio:device0")
        await #expect(throws: SensorError.missingAttribute(path: fake.deviceDirectory + "/iio:device0")) {
            for try await _ in BufferedAccelerometer(device: try fake.tree.accelerometer()).samples() {}
        }
        #expect(try fake.read("iio:device0/buffer/enable") == "0")
    }
}
