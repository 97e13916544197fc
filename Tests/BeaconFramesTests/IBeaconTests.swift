import BeaconFrames
import Testing

@Suite struct IBeaconTests {
    let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func encodesTheExactAirBytes() throws {
        let beacon = IBeacon(uuid: uuid, major: 1, minor: 2, measuredPower: -59)
        // 02 01 06 | 1A FF | 4C 00 | 02 15 | UUID | 00 01 | 00 02 | C5
        #expect(Hex.encode(beacon.advertisingData()) == "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        #expect(Hex.encode(beacon.manufacturerData) == "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
    }

    @Test(arguments: [(0 as UInt16, 0 as UInt16, -128 as Int8), (65535, 65535, 127), (258, 772, -1), (1, 2, 0)])
    func roundTrips(major: UInt16, minor: UInt16, power: Int8) throws {
        let beacon = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power)
        let decoded = try IBeacon(advertisingData: AdvertisingData(parsing: beacon.advertisingData()))
        #expect(decoded == beacon)
        let sighting = Sighting(Advertisement(time: 0, address: BluetoothAddress("C0:FF:EE:00:00:01")!, rssi: -60,
                                              data: beacon.advertisingData(includeFlags: false)))
        #expect(sighting?.identity == beacon.identity)
        #expect(sighting?.measuredPower == (power == 0 ? nil : Int(power)))
    }

    @Test func rejectsOtherCompanyIdentifier() throws {
        #expect(throws: FrameError.unexpectedValue(what: "company identifier", offset: -2, expected: "0x004C (Apple)", found: "0x0015")) {
            try IBeacon(company: CompanyIdentifier(0x0015), manufacturerData: try Hex.decode("0215426c7565436861726d426561636f6e730efe1355c5"))
        }
    }

    @Test func rejectsOtherAppleTypeWithItsOffset() throws {
        // Apple type 0x10 (Nearby Info) at byte 7 of the advertising data.
        let ad = AdvertisingData(parsing: try Hex.decode("02011a 07ff4c0010020b00"))
        #expect(throws: FrameError.unexpectedValue(what: "Apple data type", offset: 7, expected: "0x02 (iBeacon)", found: "0x10")) {
            try IBeacon(advertisingData: ad)
        }
    }

    @Test func rejectsWrongLengthAndTruncation() throws {
        #expect(throws: FrameError.truncated(what: "iBeacon frame", offset: 2, needed: 21, available: 16)) {
            try IBeacon(company: .apple, manufacturerData: try Hex.decode("0215426c7565436861726d426561636f6e73"))
        }
        #expect(throws: FrameError.wrongLength(what: "iBeacon length byte", offset: 1, expected: "0x15 (21)", found: 0x16)) {
            try IBeacon(company: .apple, manufacturerData: try Hex.decode("0216426c7565436861726d426561636f6e730efe1355c5"))
        }
        #expect(throws: FrameError.wrongLength(what: "iBeacon manufacturer data", offset: 0, expected: "23 bytes after the company identifier", found: 24)) {
            try IBeacon(company: .apple, manufacturerData: try Hex.decode("0215426c7565436861726d426561636f6e730efe1355c500"))
        }
    }

    @Test func identityTextRoundTrips() {
        let identities: [BeaconIdentity] = [
            .iBeacon(uuid: uuid, major: 1, minor: 2),
            .altBeacon(id1: uuid, id2: 65535, id3: 0),
            .eddystone(BeaconUUID(bytes: Array(0..<16))!),
        ]
        #expect(identities.map(\.description) == [
            "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2",
            "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/65535/0",
            "eddystone:00010203040506070809/0A0B0C0D0E0F",
        ])
        for identity in identities { #expect(BeaconIdentity(identity.description) == identity) }
        #expect(BeaconIdentity("e2c56db5-dffb-48d2-b060-d0f5a71096e0/1/2") == identities[0])
        #expect(BeaconIdentity("E2C56DB5/1/2") == nil)
        #expect(BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/65536") == nil)
    }

    @Test func eddystoneURLEncoderAndDecoderAgree() throws {
        for url in ["https://github.com/citruz", "http://www.example.org/a/B", "https://goo.gl/C2HC48"] {
            let field = try #require(EddystoneURL.encode(url))
            #expect(try EddystoneURL.decode(field) == url)
        }
        #expect(EddystoneURL.encode("ftp://example.com") == nil)
    }

    @Test func eddystoneTLMEncodesFromFrameType() {
        // AltBeacon's TLM fixture (altbeacon-24) with the specification's plain version byte 0x00.
        let tlm = EddystoneTLM(batteryMillivolts: 530, temperatureRaw: 787, advertisingCount: 68_428_852, uptimeTenths: 85_271_861)
        #expect(Hex.encode(tlm.frame) == "2000021203130414243405152535")
        #expect(tlm.temperatureCelsius.map { abs($0 - 3.07) < 0.01 } == true)
    }
}
