import BeaconFrames
import Testing
import Traces

/// btsnoop captures read as traces: every datalink, odd timestamps, fragmented extended reports.
@Suite struct BTSnoopTraceTests {
    static let event = try! Hex.decode("3e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1")

    static func capture(_ datalink: BTSnoop.Datalink, _ records: [(timestamp: Int64, event: [UInt8])]) -> [UInt8] {
        var bytes = BTSnoop.header(datalink: datalink)
        for record in records {
            let data = datalink == .h4 ? [0x04] + record.event : record.event
            let flags: UInt32 = datalink == .monitor ? 3 : 3
            bytes += BTSnoop.encode(.init(flags: flags, timestamp: record.timestamp, data: data))
        }
        return bytes
    }

    /// `btmon -w` writes BlueZ's monitor format (2001): events with opcode 3, no H4 byte.
    @Test(arguments: [BTSnoop.Datalink.h1, .h4, .monitor])
    func everyDatalinkReadsAsATrace(datalink: BTSnoop.Datalink) throws {
        let bytes = Self.capture(datalink, [(BTSnoop.unixEpochOffsetMicroseconds, Self.event), (BTSnoop.unixEpochOffsetMicroseconds + 250_000, Self.event)])
        let result = try TraceReader.read(bytes: bytes, name: "c")
        #expect(result.issues.isEmpty)
        #expect(result.records.map(\.advertisement.time) == [0, 0.25])
        #expect(result.records.first?.advertisement.rssi == -47)
        #expect(result.header.created == "1970-01-01T00:00:00Z")
    }

    @Test func monitorRecordsOtherThanEventsAreIgnored() throws {
        var bytes = BTSnoop.header(datalink: .monitor)
        bytes += BTSnoop.encode(.init(flags: 2, timestamp: 0, data: Self.event))  // opcode 2: a command, not an event
        bytes += BTSnoop.encode(.init(flags: 1 << 16 | 3, timestamp: 1, data: Self.event))  // controller 1, event
        let result = try TraceReader.read(bytes: bytes, name: "c")
        #expect(result.records.count == 1)
    }

    /// Timestamps are whatever the file says: extreme ones neither trap nor pass silently.
    @Test func extremeTimestampsNeitherTrapNorGoBackwards() throws {
        let bytes = Self.capture(.h1, [(Int64.min, Self.event), (Int64.max, Self.event), (0, Self.event), (1 << 62, Self.event)])
        let result = try TraceReader.read(bytes: bytes, name: "c")
        let times = result.records.map(\.advertisement.time)
        #expect(times == times.sorted())
        #expect(times.allSatisfy { $0.isFinite && $0 >= 0 })
        #expect(result.records.count + result.issues.count == 4)
        #expect(result.issues.allSatisfy { $0.message.contains("before the record ahead of it") })
        _ = BTSnoop.Record(flags: 0, timestamp: Int64.min, data: []).unixTime
    }

    /// Extended reports in fragments: status 1 (more to come) pieces are joined to the final
    /// status 0 piece; a truncated (status 2) report and a never-finished one are reported.
    @Test func extendedFragmentsAreJoinedOrReported() throws {
        func extended(status: UInt16, address: UInt8, data: [UInt8]) -> [UInt8] {
            let eventType = status << 5
            var body: [UInt8] = [0x0D, 0x01, UInt8(eventType & 0xFF), UInt8(eventType >> 8), 0x01]
            body += [address, 0, 0, 0, 0, 0xC0]        // address, little-endian
            body += [0x01, 0x00, 0x05, 0x7F, 0xC4]      // PHYs, SID 5, TX power n/a, RSSI -60
            body += [0, 0, 0, 0, 0, 0, 0, 0, 0]         // periodic interval, direct address
            body += [UInt8(data.count)] + data
            return [0x3E, UInt8(body.count)] + body
        }
        let ad = IBeacon(uuid: BeaconUUID(high: 1, low: 2), major: 3, minor: 4, measuredPower: -59).advertisingData()
        let bytes = Self.capture(.h1, [
            (0, extended(status: 1, address: 1, data: Array(ad.prefix(10)))),
            (1, extended(status: 0, address: 1, data: Array(ad.dropFirst(10)))),
            (2, extended(status: 1, address: 2, data: Array(ad.prefix(10)))),
            (3, extended(status: 2, address: 2, data: Array(ad.dropFirst(10)))),
            (4, extended(status: 1, address: 3, data: Array(ad.prefix(10)))),
        ])
        let result = try TraceReader.read(bytes: bytes, name: "c")
        #expect(result.records.count == 1)
        #expect(result.records.first?.advertisement.data == ad)
        #expect(result.records.first.flatMap { Sighting($0.advertisement) }?.identity == .iBeacon(uuid: BeaconUUID(high: 1, low: 2), major: 3, minor: 4))
        #expect(result.issues.count == 2)
        #expect(result.issues.contains { $0.message.contains("truncated") })
        #expect(result.issues.contains { $0.message.contains("never completed") })
    }
}
