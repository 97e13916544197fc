import BeaconFrames
import DBus

/// An `org.bluez.Device1` object as far as advertisements go, decoded at the edge.
///
/// Fields of the wrong type (BlueZ versions and mocks differ) are treated as absent rather than
/// trusted; ``problems`` names them for the debug log.
struct BlueZDevice: Sendable, Hashable {
    var path: DBusObjectPath
    var adapter: DBusObjectPath?
    var address: BluetoothAddress?
    var addressType: AddressType?
    var rssi: Int?
    var manufacturerData: [UInt16: [UInt8]] = [:]
    var serviceData: [String: [UInt8]] = [:]
    var flags: [UInt8] = []
    var otherData: [UInt8: [UInt8]] = [:]
    var problems: [String] = []

    /// The properties whose change means an advertisement was received.
    static let advertisementProperties: Set<String> = [
        BlueZ.Property.rssi, BlueZ.Property.manufacturerData, BlueZ.Property.serviceData,
        BlueZ.Property.advertisingData, BlueZ.Property.advertisingFlags,
    ]

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        update(properties)
    }

    /// Takes the properties present in `properties` (all of them at creation, the changed ones
    /// from PropertiesChanged) and leaves the others as they were.
    mutating func update(_ properties: [String: DBusValue]) {
        // One pass over what is there (usually RSSI and ManufacturerData) rather than a lookup per
        // known name: this runs for every advertisement received.
        for (name, value) in properties {
            switch name {
            case BlueZ.Property.rssi:
                rssi = value.intValue
            case BlueZ.Property.manufacturerData:
                manufacturerData = decodeMap(value, key: name) { $0.intValue.flatMap(UInt16.init(exactly:)) }
            case BlueZ.Property.serviceData:
                serviceData = decodeMap(value, key: name) { $0.stringValue }
            case BlueZ.Property.advertisingData:
                otherData = decodeMap(value, key: name) { $0.intValue.flatMap(UInt8.init(exactly:)) }
            case BlueZ.Property.advertisingFlags:
                if let bytes = value.bytesValue { flags = bytes } else { problems.append("AdvertisingFlags has type \(value.signature)") }
            case BlueZ.Property.address:
                let text = value.stringValue ?? ""
                address = BluetoothAddress(text)
                if address == nil { problems.append("Address “\(text)” is not a Bluetooth address") }
            case BlueZ.Property.addressType:
                addressType = value.stringValue.flatMap(AddressType.init(rawValue:))
            case BlueZ.Property.adapter:
                adapter = value.objectPathValue
            default:
                break
            }
        }
    }

    /// Forgets properties BlueZ invalidated (RSSI when a device is no longer in range, say).
    mutating func invalidate(_ names: [String]) {
        for name in names {
            switch name {
            case BlueZ.Property.rssi: rssi = nil
            case BlueZ.Property.manufacturerData: manufacturerData = [:]
            case BlueZ.Property.serviceData: serviceData = [:]
            case BlueZ.Property.advertisingData: otherData = [:]
            case BlueZ.Property.advertisingFlags: flags = []
            default: break
            }
        }
    }

    /// Reads `a{?v}` with byte-array values; anything else is recorded as a problem.
    private mutating func decodeMap<Key: Hashable>(_ value: DBusValue, key name: String,
                                                   _ decodeKey: (DBusValue) -> Key?) -> [Key: [UInt8]] {
        guard let entries = value.dictionaryValue else {
            if value.arrayValue?.isEmpty != true { problems.append("\(name) has type \(value.signature)") }
            return [:]
        }
        var result: [Key: [UInt8]] = [:]
        for entry in entries {
            guard let key = decodeKey(entry.key), let bytes = entry.value.bytesValue else {
                problems.append("\(name) has an entry of type \(entry.key.signature)→\(entry.value.signature)")
                continue
            }
            result[key] = bytes
        }
        return result
    }

    /// The AD structures this device's last advertisement carried, as far as BlueZ tells.
    var advertisingData: [UInt8] {
        AdvertisingDataBuilder.build(flags: flags, manufacturerData: manufacturerData,
                                     serviceData: serviceData, otherData: otherData)
    }
}
