import Foundation
import Testing
@testable import Sensors

struct IIODiscoveryTests {
    @Test func findsOnlyDevicesWithThreeAccelerationChannels() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer("iio:device1", name: "lis3dh")
        try fake.write("iio:device0/name", "ads1015")
        try fake.write("iio:device0/in_voltage0_raw", "123")
        try fake.write("iio:device2/in_accel_x_raw", "1")
        let found = try fake.tree.accelerometers()
        #expect(found.map(\.id) == ["iio:device1"])
        let device = try #require(found.first)
        #expect(device.chipName == "lis3dh")
        #expect(device.scale == [0.0383, 0.0383, 0.0383])
        #expect(device.offset == [0, 0, 0])
        #expect(device.samplingFrequency == 100)
        #expect(device.availableFrequencies == [6.25, 12.5, 25, 50, 100])
        #expect(device.devicePath == fake.deviceDirectory + "/iio:device1")
        #expect(!device.supportsBuffer)
    }

    @Test func prefersPerChannelScaleOverShared() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try fake.write("iio:device0/in_accel_y_scale", "0.5")
        #expect(try fake.tree.accelerometer().scale == [0.0383, 0.5, 0.0383])
    }

    @Test func selectsByIdOrChipName() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer("iio:device0", name: "adxl345")
        try fake.addAccelerometer("iio:device3", name: "mpu6050")
        #expect(try fake.tree.accelerometer(named: "mpu6050").id == "iio:device3")
        #expect(try fake.tree.accelerometer(named: "iio:device0").chipName == "adxl345")
        #expect(throws: SensorError.accelerometerNotFound(name: "bmi160", root: fake.root)) {
            try fake.tree.accelerometer(named: "bmi160")
        }
    }

    @Test func reportsAnEmptyRootClearly() throws {
        let fake = try FakeIIOTree()
        #expect(throws: SensorError.noAccelerometer(root: fake.root)) { try fake.tree.accelerometer() }
        let missing = IIODeviceTree(root: fake.root + "/nowhere")
        #expect(try missing.accelerometers().isEmpty)
    }

    @Test func namesTheFileOfAMalformedAttribute() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer(scale: "0.03x")
        let error = try #require(throws: SensorError.self) { try fake.tree.accelerometers() }
        #expect(error == .malformedAttribute(path: fake.root + "/iio:device0/in_accel_scale", text: "0.03x", reason: "expected a decimal number"))
        #expect(error.description.contains("/iio:device0/in_accel_scale"))
    }

    @Test func namesTheMissingScale() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try FileManager.default.removeItem(atPath: fake.root + "/iio:device0/in_accel_scale")
        #expect(throws: SensorError.missingAttribute(path: fake.root + "/iio:device0/in_accel_scale")) {
            try fake.tree.accelerometers()
        }
    }

    @Test func permissionErrorsPointAtTheUdevRule() {
        let message = SensorError.permissionDenied(path: "/dev/iio:device0").description
        #expect(message.contains("/dev/iio:device0"))
        #expect(message.contains("udev/70-nearplay-sensors.rules"))
    }
}

struct PolledAccelerometerTests {
    @Test func scalesAndOffsetsRawReadings() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer(raw: (10, -20, 256), scale: "0.5", offsets: ("0", "4", "-6"))
        let sample = try PolledAccelerometer(device: fake.tree.accelerometer()).read()
        #expect(sample.x == 5)
        #expect(sample.y == -8)
        #expect(sample.z == 125)
    }

    @Test func turnsReadingsToTheMountingOrientation() throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer(raw: (1, 2, 3), scale: "1")
        let polled = PolledAccelerometer(device: try fake.tree.accelerometer(), orientation: AxisOrientation("z,-x,y")!)
        let sample = try polled.read()
        #expect([sample.x, sample.y, sample.z] == [3, -1, 2])
    }

    @Test func streamsAtTheRequestedRateAndFollowsTheFiles() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer(raw: (0, 0, 256), scale: "0.038300")
        let polled = PolledAccelerometer(device: try fake.tree.accelerometer(), rate: 50)
        var samples: [AccelerationSample] = []
        for try await sample in polled.samples(limit: 250) {
            samples.append(sample)
            if samples.count == 5 { try fake.write("iio:device0/in_accel_z_raw", "-256") }
            if sample.z < 0 { break }
        }
        #expect(abs(samples[0].z - 9.8048) < 1e-9)
        #expect(samples.last!.z == -9.8048, "the stream must read the file again for every sample")
        // The reading thread times samples as it reads them; the first 16 are read without
        // waiting for the consumer (the backlog limit), so their spacing is the polling rate even
        // when parallel tests keep the consumer busy. The median ignores a scheduling hiccup.
        let timed = samples.prefix(16)
        try #require(timed.count >= 3)
        let gaps = zip(timed.dropFirst(), timed).map { $0.time - $1.time }.sorted()
        let median = gaps[gaps.count / 2]
        #expect(median > 0.015 && median < 0.04, "50 Hz is one sample every 20 ms, got \(median) s")
    }

    @Test func aMalformedRawValueEndsTheStreamWithTheFileName() async throws {
        let fake = try FakeIIOTree()
        try fake.addAccelerometer()
        try fake.write("iio:device0/in_accel_y_raw", "twelve")
        let polled = PolledAccelerometer(device: try fake.tree.accelerometer())
        await #expect(throws: SensorError.malformedAttribute(path: fake.root + "/iio:device0/in_accel_y_raw", text: "twelve", reason: "expected an integer")) {
            for try await _ in polled.samples() {}
        }
    }
}
