import BeaconFrames
import Testing

@Suite struct AdvertisingDataTests {
    @Test func readsTypedFields() throws {
        // 02 01 06          Flags: LE General Discoverable, BR/EDR not supported
        // 05 03 0A18 0D18   Complete list of 16-bit UUIDs: 0x180A, 0x180D
        // 02 0A F4          Tx Power Level: -12 dBm
        // 06 09 "Hello"     Complete Local Name
        // 05 16 AAFE 1020   Service data for 0xFEAA: 10 20
        let ad = AdvertisingData(parsing: try Hex.decode("020106 05030a180d18 020af4 060948656c6c6f 0516aafe1020"))
        #expect(ad.problems.isEmpty)
        #expect(ad.flags == 0x06)
        #expect(ad.serviceUUIDs16 == [0x180A, 0x180D])
        #expect(ad.txPowerLevel == -12)
        #expect(ad.localName?.name == "Hello")
        #expect(ad.localName?.complete == true)
        #expect(ad.serviceData16.first?.uuid == 0xFEAA)
        #expect(ad.serviceData16.first?.data == [0x10, 0x20])
        #expect(ad.structures.map(\.offset) == [0, 3, 9, 12, 19])
    }

    @Test func skipsZeroLengthPaddingAndKeepsGoing() throws {
        // Flags, two zero bytes of padding, then a name: all three kept apart, no problem.
        let ad = AdvertisingData(parsing: try Hex.decode("020106 0000 03096869 000000"))
        #expect(ad.structures.map(\.type) == [.flags, .completeLocalName])
        #expect(ad.localName?.name == "hi")
        #expect(ad.problems.isEmpty)
    }

    @Test func reportsTruncatedLastStructureWithItsOffset() throws {
        // Flags, then a structure at byte 3 claiming 3 bytes with 1 left.
        let ad = AdvertisingData(parsing: try Hex.decode("0201060303"))
        #expect(ad.flags == 6)
        #expect(ad.problems == [.truncated(what: "AD structure", offset: 3, needed: 3, available: 1)])
        #expect(ad.problems.first?.description == "AD structure at byte 3 needs 3 bytes but only 1 remain")
    }

    @Test func roundTripsStructuresToBytes() throws {
        let bytes = try Hex.decode("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        #expect(AdvertisingData(parsing: bytes).bytes == bytes)
    }

    @Test func reads128BitServiceUUIDsInTheUsualOrder() throws {
        // Little-endian on air: 23d1bcea5f782315deef121230150000 is 00001530-1212-EFDE-1523-785FEABCD123.
        let ad = AdvertisingData(parsing: try Hex.decode("110723d1bcea5f782315deef121230150000"))
        #expect(ad.serviceUUIDs128.map(\.description) == ["00001530-1212-EFDE-1523-785FEABCD123"])
    }

    @Test func hexDecodingNamesTheBadCharacter() {
        #expect(throws: HexError(offset: 2, reason: "'z' is not a hex digit")) { try Hex.decode("02z1") }
        #expect(throws: HexError(offset: 3, reason: "odd number of hex digits")) { try Hex.decode("020") }
        #expect((try? Hex.decode("02:01 06")) == [2, 1, 6])
        #expect(throws: HexError(offset: 2, reason: "byte 0xC3 is not a hex digit")) { try Hex.decode("02é1") }
        #expect(BluetoothAddress("C0::FF:EE:00:00:01") == nil)
        #expect(BluetoothAddress("C0:FF-EE:00:00:01") == nil)
        #expect(BluetoothAddress("c0-ff-ee-00-00-01")?.description == "C0:FF:EE:00:00:01")
    }
}
