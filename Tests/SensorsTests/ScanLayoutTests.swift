import Testing
@testable import Sensors

func channel(_ name: String, _ index: Int, _ type: String) throws -> ScanChannel {
    ScanChannel(name: name, index: index, type: try ScanElementType(parsing: type))
}

struct ScanLayoutTests {
    @Test func alignsTheTimestampToEightBytes() throws {
        let layout = try ScanLayout(channels: [
            channel("in_timestamp", 3, "le:s64/64>>0"),
            channel("in_accel_z", 2, "le:s12/16>>4"),
            channel("in_accel_x", 0, "le:s12/16>>4"),
            channel("in_accel_y", 1, "le:s12/16>>4"),
        ])
        #expect(layout.channels.map(\.name) == ["in_accel_x", "in_accel_y", "in_accel_z", "in_timestamp"])
        #expect(layout.offsets == [0, 2, 4, 8])
        #expect(layout.scanBytes == 16)
    }

    @Test func padsTheScanToItsLargestElement() throws {
        let bytes = try ScanLayout(channels: [channel("a", 0, "le:u8/8>>0"), channel("b", 1, "be:s32/32>>0"), channel("c", 2, "le:u8/8>>0")])
        #expect(bytes.offsets == [0, 4, 8])
        #expect(bytes.scanBytes == 12)
        let small = try ScanLayout(channels: [channel("a", 0, "le:u8/8>>0"), channel("b", 1, "le:u8/8>>0"), channel("c", 2, "le:u8/8>>0")])
        #expect(small.offsets == [0, 1, 2])
        #expect(small.scanBytes == 3)
    }

    @Test func placesRepeatedElementsAsOneBlock() throws {
        let layout = try ScanLayout(channels: [channel("a", 0, "le:s16/16>>0"), channel("q", 1, "le:s16/16X4>>0")])
        #expect(layout.offsets == [0, 8])
        #expect(layout.scanBytes == 16)
        let bytes: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0xFF, 0xFF, 5, 0]
        #expect(layout.decodeAll(bytes) == [[1, 2, 3, -1, 5]])
    }

    @Test func refusesTwoChannelsOnOneIndex() throws {
        #expect(throws: ScanLayout.LayoutError.duplicateIndex(1, "a", "b")) {
            try ScanLayout(channels: [channel("a", 1, "le:u8/8>>0"), channel("b", 1, "le:u8/8>>0")])
        }
        #expect(throws: ScanLayout.LayoutError.noChannels) { try ScanLayout(channels: []) }
    }

    @Test func decodesScaledOrientedSamplesWithTimestamps() throws {
        let layout = try ScanLayout(channels: [
            channel("in_accel_x", 0, "be:s16/16>>0"), channel("in_accel_y", 1, "be:s16/16>>0"),
            channel("in_accel_z", 2, "be:s16/16>>0"), channel("in_timestamp", 3, "le:s64/64>>0"),
        ])
        let decoder = try AccelerationScanDecoder(layout: layout, scale: [0.5, 0.5, 0.5], offset: [0, 0, 2],
                                                  orientation: AxisOrientation("-y,x,z")!)
        // x = 10, y = -4, z = 18 (big-endian), 2 bytes padding, timestamp 1.5 s in ns (little-endian).
        var bytes: [UInt8] = [0, 10, 0xFF, 0xFC, 0, 18, 0, 0]
        bytes += withUnsafeBytes(of: Int64(1_500_000_000).littleEndian, Array.init)
        var samples: [AccelerationSample] = []
        let used = (bytes + [1, 2, 3]).withUnsafeBytes { decoder.decode($0, into: &samples) }
        #expect(used == 16)
        #expect(samples == [AccelerationSample(time: 1.5, x: 2, y: 5, z: 10)])
    }
}
