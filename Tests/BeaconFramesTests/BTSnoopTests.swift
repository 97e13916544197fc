import BeaconFrames
import Testing

@Suite struct BTSnoopTests {
    struct ExpectedReport: Hashable {
        var record: Int
        var address: String
        var rssi: Int
        var uuid: String
        var major: Int
        var minor: Int
        var measuredPower: Int
    }

    /// The Android capture yields exactly the iBeacon reports in horizon74-expected-ibeacon.csv,
    /// and nothing else in it is taken for an iBeacon.
    @Test func horizon74CaptureYieldsExactlyTheExpectedIBeacons() throws {
        let csv = String(decoding: try SharedData.bytes("captures/horizon74-expected-ibeacon.csv"), as: UTF8.self)
        let expected = Set(csv.split(whereSeparator: \.isNewline).dropFirst().map { line -> ExpectedReport in
            let f = line.split(separator: ",").map(String.init)
            return ExpectedReport(record: Int(f[1])!, address: f[6], rssi: Int(f[7])!, uuid: f[8].uppercased(),
                                  major: Int(f[9])!, minor: Int(f[10])!, measuredPower: Int(f[11])!)
        })
        #expect(expected.count == 11)

        let file = try BTSnoop.parse(try SharedData.bytes("captures/horizon74_btsnoop_hci.log"))
        #expect(file.datalink == .h4)
        #expect(file.records.count == 2572)
        #expect(file.problems.isEmpty)

        var found = Set<ExpectedReport>()
        var advertisingReports = 0
        for (index, record) in file.records.enumerated() {
            guard let event = record.hciEvent(datalink: file.datalink), event.count > 2, event[0] == 0x3E, event[2] == 0x02 else { continue }
            for report in try HCIEvent.advertisingReports(event, framing: .eventCode) {
                advertisingReports += 1
                let advertisement = Advertisement(time: 0, address: report.address, rssi: report.rssi, data: report.data)
                guard let sighting = Sighting(advertisement), case let .iBeacon(uuid, major, minor) = sighting.identity else { continue }
                #expect(report.isScanResponse, "record \(index + 1): the capture's iBeacons all come in scan responses")
                found.insert(ExpectedReport(record: index + 1, address: report.address.description, rssi: report.rssi ?? 0,
                                            uuid: uuid.description, major: Int(major), minor: Int(minor),
                                            measuredPower: sighting.measuredPower ?? 0))
            }
        }
        #expect(advertisingReports == 412)
        #expect(found == expected)
    }

    @Test(arguments: [BTSnoop.Datalink.h1, .h4, .monitor])
    func writerOutputReadsBack(datalink: BTSnoop.Datalink) throws {
        let event = try Hex.decode("3e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1")
        let data = datalink == .h4 ? [0x04] + event : event
        // Monitor format: controller index 1, opcode 3 (event); the others: received event.
        let flags: UInt32 = datalink == .monitor ? 1 << 16 | 3 : 3
        let record = BTSnoop.Record(flags: flags, timestamp: BTSnoop.unixEpochOffsetMicroseconds + 1_700_000_000_000_000, data: data)
        let bytes = BTSnoop.header(datalink: datalink) + BTSnoop.encode(record) + BTSnoop.encode(record)
        let file = try BTSnoop.parse(bytes)
        #expect(file.datalink == datalink)
        #expect(file.records.count == 2)
        #expect(file.records[0].hciEvent(datalink: datalink) == event)
        #expect(file.records[1].fileOffset == 16 + 24 + data.count)
        #expect(file.records[0].unixTime == 1_700_000_000)
    }

    @Test func reportsTruncatedLastRecordAndKeepsTheRest() throws {
        let record = BTSnoop.Record(flags: 3, timestamp: 0, data: [0x3E, 0x01, 0x02])
        let whole = BTSnoop.header(datalink: .h1) + BTSnoop.encode(record)
        let file = try BTSnoop.parse(whole + BTSnoop.encode(record).dropLast(2))
        #expect(file.records.count == 1)
        #expect(file.problems == [.truncated(what: "record data", offset: whole.count + 24, needed: 3, available: 1)])
    }

    @Test func refusesOtherFilesClearly() {
        #expect(throws: FrameError.unexpectedValue(what: "btsnoop datalink", offset: 12, expected: "1001 (H1), 1002 (H4) or 2001 (BlueZ monitor)", found: "1003")) {
            try BTSnoop.parse(BTSnoop.magic + [0, 0, 0, 1, 0, 0, 0x03, 0xEB])
        }
        #expect(throws: FrameError.self) { try BTSnoop.parse(Array("not a capture at all".utf8)) }
    }
}
