import BeaconFrames
import Testing

@Suite struct HCIEventTests {
    // 04 3E 2B 02 | 01 reports | 03 ADV_NONCONN_IND | 01 random | E1ACCA3DEA0D (LE) | 1F length 31
    // | 31 bytes of AD | D1 RSSI -47
    let legacy = "043e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1"

    @Test func decodesLegacyReportWithAndWithoutH4Byte() throws {
        let withH4 = try HCIEvent.advertisingReports(try Hex.decode(legacy))
        let without = try HCIEvent.advertisingReports(Array(try Hex.decode(legacy).dropFirst()), framing: .eventCode)
        #expect(withH4 == without)
        let report = try #require(withH4.first)
        #expect(report.address.description == "0D:EA:3D:CA:AC:E1")
        #expect(report.addressType == .random)
        #expect(report.rssi == -47)
        #expect(report.eventType == 3)
        #expect(report.data.count == 31)
    }

    @Test func decodesSeveralReportsInOneEvent() throws {
        // Two reports: ADV_IND public 112233445566 with "02 01 06" RSSI -40, then SCAN_RSP random
        // AABBCCDDEEFF with no data and RSSI 127 (unavailable).
        let bytes = try Hex.decode("3e 19 02 02 00 00 665544332211 03 020106 d8 04 01 ffeeddccbbaa 00 7f")
        let reports = try HCIEvent.advertisingReports(bytes)
        #expect(reports.count == 2)
        #expect(reports[0].address.description == "11:22:33:44:55:66")
        #expect(reports[0].rssi == -40)
        #expect(reports[1].isScanResponse)
        #expect(reports[1].rssi == nil)
        #expect(reports[1].data.isEmpty)
    }

    @Test func decodesExtendedReport() throws {
        // 3E len 0D | 01 | type 0x0010 (legacy, ADV_IND as extended) | 00 public | 665544332211 |
        // 01 00 PHYs | FF SID | 7F tx power n/a | C4 RSSI -60 | 0000 interval | 00 000000000000 direct |
        // 03 020106
        let bytes = try Hex.decode("3e 1d 0d 01 1000 00 665544332211 01 00 ff 7f c4 0000 00 000000000000 03 020106")
        let report = try #require(try HCIEvent.advertisingReports(bytes).first)
        #expect(report.isExtended)
        #expect(report.rssi == -60)
        #expect(report.txPower == nil)
        #expect(report.advertisingSID == 0xFF)
        #expect(report.data == [2, 1, 6])
        #expect(report.dataStatus == 0)
    }

    @Test func namesTheFieldAndOffsetOfEveryInconsistency() throws {
        // The parameter length says 0x41 but 63 bytes follow (beacontools' 0x41-prefixed packets).
        let bytes = try Hex.decode("413e41020103013594efcdd61c190201061aff4c0002154142434445464748494041424344454600010002f8dd")
        #expect(throws: FrameError.unexpectedValue(what: "H4 packet type", offset: 0, expected: "0x04 (HCI event)", found: "0x41")) {
            try HCIEvent.advertisingReports(bytes, framing: .h4)
        }
        #expect(throws: FrameError.truncated(what: "HCI event parameters", offset: 2, needed: 0x1D, available: 20)) {
            // Event with its RSSI missing from a declared length that is also too long.
            try HCIEvent.advertisingReports(try Hex.decode("3e1d02010401437b308e58f41211079ecadc240ee5a9"))
        }
        #expect(throws: FrameError.truncated(what: "RSSI", offset: 31, needed: 1, available: 0)) {
            try HCIEvent.advertisingReports(try Hex.decode("3e1d02010401437b308e58f41211079ecadc240ee5a9e093f3a3b50100406e"))
        }
        #expect(throws: FrameError.unexpectedValue(what: "LE Meta subevent", offset: 2, expected: "0x02 (advertising report) or 0x0D (extended advertising report)", found: "0x03")) {
            try HCIEvent.advertisingReports([0x3E, 0x01, 0x03])
        }
    }
}
