import BeaconFrames
import DBus

/// An `org.bluez.Device1` object as far as advertisements go, decoded at the edge.
///
/// Fields of the wrong type (BlueZ versions and mocks differ) are treated as absent rather than
/// trusted; ``problems`` names them for the debug log.
struct BlueZDevice: Sendable {
    var path: DBusObjectPath
    var adapter: DBusObjectPath?
    var address: BluetoothAddress?
    var addressType: AddressType?
    var rssi: Int?
    var manufacturerData: [UInt16: [UInt8]] = [:] { didSet { advertisingDataIsCurrent = false } }
    var serviceData: [String: [UInt8]] = [:] { didSet { advertisingDataIsCurrent = false } }
    var flags: [UInt8] = [] { didSet { advertisingDataIsCurrent = false } }
    var otherData: [UInt8: [UInt8]] = [:] { didSet { advertisingDataIsCurrent = false } }
    var problems: [String] = []
    /// The AD structures last built from the fields above, rebuilt only when one of them changes
    /// (a beacon repeats the same advertisement; only its RSSI moves).
    private var builtAdvertisingData: [UInt8] = []
    private var advertisingDataIsCurrent = false

    /// The properties whose change means an advertisement was received.
    static let advertisementProperties: Set<String> = [
        BlueZ.Property.rssi, BlueZ.Property.manufacturerData, BlueZ.Property.serviceData,
        BlueZ.Property.advertisingData, BlueZ.Property.advertisingFlags,
    ]

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        update(properties)
    }

    /// Takes the properties present in `properties` and leaves the others as they were.
    mutating func update(_ properties: [String: DBusValue]) {
        for (name, value) in properties { set(name, value) }
    }

    /// Takes the properties a PropertiesChanged signal carries and leaves the others as they were.
    mutating func update(_ changes: PropertyChanges) {
        for (name, value) in changes { set(name, value) }
    }

    /// One property, by name; names we do not use are ignored. Runs for every advertisement
    /// received, so unchanged byte maps are compared in place rather than rebuilt.
    private mutating func set(_ name: String, _ value: DBusValue) {
        switch name {
        case BlueZ.Property.rssi:
            rssi = value.intValue
        case BlueZ.Property.manufacturerData:
            if let map = Self.changedMap(value, from: manufacturerData, name: name, problems: &problems,
                                         key: { $0.intValue.flatMap(UInt16.init(exactly:)) }) {
                manufacturerData = map
            }
        case BlueZ.Property.serviceData:
            if let map = Self.changedMap(value, from: serviceData, name: name, problems: &problems, key: { $0.stringValue }) {
                serviceData = map
            }
        case BlueZ.Property.advertisingData:
            if let map = Self.changedMap(value, from: otherData, name: name, problems: &problems,
                                         key: { $0.intValue.flatMap(UInt8.init(exactly:)) }) {
                otherData = map
            }
        case BlueZ.Property.advertisingFlags:
            if let bytes = value.bytesValue {
                if bytes != flags { flags = bytes }
            } else {
                problems.append("AdvertisingFlags has type \(value.signature)")
            }
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

    /// Reads `a{?v}` with byte-array values: the new map, or nil when `value` holds exactly
    /// `current` (compared in place, without building a map: this runs for every advertisement
    /// received). Entries of other types are left out and named in `problems`.
    private static func changedMap<Key: Hashable>(_ value: DBusValue, from current: [Key: [UInt8]], name: String,
                                                  problems: inout [String],
                                                  key decodeKey: (DBusValue) -> Key?) -> [Key: [UInt8]]? {
        guard let entries = value.dictionaryValue else {
            if value.arrayValue?.isEmpty != true { problems.append("\(name) has type \(value.signature)") }
            return current.isEmpty ? nil : [:]
        }
        let unchanged = entries.count == current.count && entries.allSatisfy { entry in
            guard let key = decodeKey(entry.key), let bytes = entry.value.bytesValue else { return false }
            return current[key] == bytes
        }
        if unchanged { return nil }
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
        mutating get {
            if !advertisingDataIsCurrent {
                builtAdvertisingData = AdvertisingDataBuilder.build(
                    flags: flags, manufacturerData: manufacturerData, serviceData: serviceData, otherData: otherData)
                advertisingDataIsCurrent = true
            }
            return builtAdvertisingData
        }
    }
}
