import BeaconFrames
@testable import Radio
import DBus
import Testing

/// Rebuilding AD structures from what BlueZ's Device1 reports.
@Suite struct AdvertisingDataTests {
    @Test func rebuildsManufacturerDataAsOneADStructure() {
        let data = AdvertisingDataBuilder.build(manufacturerData: [0x004C: [0x02, 0x15, 0xAA]], serviceData: [:])
        // length 6, type FF, company 4C 00 little-endian, then the bytes.
        #expect(data == [0x06, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0xAA])
    }

    @Test func rebuildsServiceDataWithTheShortestUUIDForm() {
        let data = AdvertisingDataBuilder.build(manufacturerData: [:], serviceData: [
            "0000feaa-0000-1000-8000-00805f9b34fb": [0x00, 0xEB],
            "12345678-0000-1000-8000-00805f9b34fb": [0x01],
            "e2c56db5-dffb-48d2-b060-d0f5a71096e0": [0x02],
        ])
        #expect(Array(data[0..<6]) == [0x05, 0x16, 0xAA, 0xFE, 0x00, 0xEB], "16-bit UUID FEAA (Eddystone)")
        #expect(Array(data[6..<13]) == [0x06, 0x20, 0x78, 0x56, 0x34, 0x12, 0x01], "32-bit UUID, little-endian")
        #expect(data[13] == 18 && data[14] == 0x21 && data[15] == 0xE0 && data[30] == 0xE2 && data[31] == 0x02,
                "128-bit UUID, little-endian")
    }

    @Test func putsFlagsFirstAndSkipsFieldsTooLongForOneStructure() {
        let data = AdvertisingDataBuilder.build(flags: [0x06], manufacturerData: [0xFFFF: Array(repeating: 1, count: 300)],
                                                serviceData: [:], otherData: [0x09: Array("np".utf8)])
        #expect(data == [0x02, 0x01, 0x06, 0x03, 0x09, 0x6E, 0x70])
    }

    @Test func decodesADevicesPropertiesAndToleratesWrongTypes() {
        var device = BlueZDevice(path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01", properties: [
            "Address": .string("C0:FF:EE:00:00:01"),
            "AddressType": .string("random"),
            "RSSI": .int16(-63),
            "ManufacturerData": .dictionary(key: "q", value: "v", [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Beacons.first.manufacturerData)))]),
            // The mock's empty defaults have the wrong types (aa{qv}, aay): absent, not a crash.
            "ServiceData": .array(element: "a{sv}", []),
            "AdvertisingFlags": .array(element: "ay", []),
        ])
        #expect(device.address == BluetoothAddress("C0:FF:EE:00:00:01"))
        #expect(device.addressType == .random)
        #expect(device.rssi == -63)
        #expect(device.advertisingData == Beacons.first.advertisingData(includeFlags: false))
        #expect(device.problems == ["AdvertisingFlags has type aay"])
    }

    /// The AD bytes are kept between updates that do not touch them; every update that does is seen.
    @Test func followsPropertyChangesThatTouchTheAdvertisingData() {
        func manufacturerData(_ beacon: IBeacon) -> DBusValue {
            .dictionary(key: "q", value: "v", [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(beacon.manufacturerData)))])
        }
        var device = BlueZDevice(path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01", properties: [
            "Address": .string("C0:FF:EE:00:00:01"), "RSSI": .int16(-63), "ManufacturerData": manufacturerData(Beacons.first),
        ])
        #expect(device.advertisingData == Beacons.first.advertisingData(includeFlags: false))
        device.update(PropertyChanges(["RSSI": .int16(-70), "ManufacturerData": manufacturerData(Beacons.first)]))
        #expect(device.rssi == -70)
        #expect(device.advertisingData == Beacons.first.advertisingData(includeFlags: false))
        device.update(PropertyChanges(["ManufacturerData": manufacturerData(Beacons.second)]))
        #expect(device.advertisingData == Beacons.second.advertisingData(includeFlags: false))
        device.update(PropertyChanges(["AdvertisingFlags": .bytes([0x06])]))
        #expect(device.advertisingData == [0x02, 0x01, 0x06] + Beacons.second.advertisingData(includeFlags: false))
        device.invalidate(["ManufacturerData", "AdvertisingFlags"])
        #expect(device.advertisingData.isEmpty)
        #expect(device.rssi == -70)
    }

    @Test func readsPropertyChangesInPlace() throws {
        let changes = try #require(PropertyChanges(.stringVariantDictionary([("RSSI", .int16(-50)), ("Name", .string("x"))])))
        #expect(changes["RSSI"] == .int16(-50))
        #expect(changes["TxPower"] == nil)
        #expect(changes.names == ["RSSI", "Name"])
        #expect(PropertyChanges(.strings(["RSSI"])) == nil, "not a dictionary")
        #expect(PropertyChanges(.dictionary(key: "q", value: "v", [])) == nil, "not keyed by strings")
    }

    @Test func ignoresSignalsOfTheWrongShape() {
        var objects = BlueZObjects()
        var signal = DBusMessage.signal(path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
                                        member: "PropertiesChanged", body: [.int32(1)])
        guard case .irrelevant = objects.apply(signal) else { Issue.record("a malformed PropertiesChanged was applied"); return }
        signal = .signal(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                         body: [.string("not a path"), .int32(3)])
        guard case .irrelevant = objects.apply(signal) else { Issue.record("a malformed InterfacesAdded was applied"); return }
        #expect(objects.adapters.isEmpty)
    }

    @Test func sendsIntervalsOnlyWhereBlueZReadsThem() {
        let payload = AdvertisingPayload(manufacturerData: [0x004C: [0x02, 0x15]], interval: .milliseconds(100))
        let with = BlueZAdvertiser.properties(for: payload, withInterval: true)
        #expect(with["MinInterval"] == .uint32(100) && with["MaxInterval"] == .uint32(100))
        let without = BlueZAdvertiser.properties(for: payload, withInterval: false)
        #expect(Set(without.keys) == ["Type", "ManufacturerData"])
    }

    @Test func infersIntervalControlFromSupportedCapabilities() {
        let adapter: [String: DBusValue] = ["Address": .string("00:01:02:03:04:05"), "Powered": .boolean(true)]
        let manager: [String: DBusValue] = ["ActiveInstances": .byte(1), "SupportedInstances": .byte(3)]
        let old = BlueZAdapter(path: "/org/bluez/hci0", interfaces: [
            "org.bluez.Adapter1": adapter, "org.bluez.LEAdvertisingManager1": manager,
        ])
        #expect(old?.advertising == BlueZAdapter.AdvertisingCapacity(activeInstances: 1, freeInstances: 3, controlsInterval: false))
        var newer = manager
        newer["SupportedCapabilities"] = .stringVariantDictionary([("MaxAdvLen", .byte(251))])
        let recent = BlueZAdapter(path: "/org/bluez/hci0", interfaces: [
            "org.bluez.Adapter1": adapter, "org.bluez.LEAdvertisingManager1": newer,
        ])
        #expect(recent?.advertising?.controlsInterval == true)
        #expect(BlueZAdapter(path: "/org/bluez/hci0", interfaces: ["org.bluez.Adapter1": adapter])?.advertising == nil)
    }
}
