import DBus

/// A local copy of bluetoothd's objects, kept current from its ObjectManager and Properties
/// signals, as bleak and bluetoothctl keep theirs.
struct BlueZObjects: Sendable {
    /// Interface name → property name → value, per object path.
    private(set) var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]

    /// What a signal changed.
    enum Change: Sendable {
        /// org.bluez got a new owner (nil: none); the copy must be reloaded.
        case ownerChanged(String?)
        /// With the added interfaces' properties as the signal carried them.
        case interfacesAdded(DBusObjectPath, Set<String>, properties: [String: [String: DBusValue]])
        case interfacesRemoved(DBusObjectPath, Set<String>)
        case propertiesChanged(DBusObjectPath, interface: String, changed: PropertyChanges, invalidated: [String])
        case irrelevant
    }

    init() {}

    /// Decodes a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    init(managedObjects reply: [DBusValue]) throws {
        guard let entries = reply.first?.dictionaryValue else {
            throw DBusError.invalidArguments("GetManagedObjects returned (\(reply.map(\.signature.rawValue).joined())), not a{oa{sa{sv}}}")
        }
        for entry in entries {
            guard let path = entry.key.objectPathValue else { continue }
            objects[path] = Self.interfaces(entry.value)
        }
    }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for entry in value.dictionaryValue ?? [] {
            guard let name = entry.key.stringValue else { continue }
            result[name] = entry.value.stringKeyedValue ?? [:]
        }
        return result
    }

    /// Applies one signal from the BlueZ match rules and says what it changed. Signals of the wrong
    /// shape are irrelevant, not errors: they cannot come from a working bluetoothd.
    mutating func apply(_ signal: DBusMessage) -> Change {
        switch (signal.interface, signal.member) {
        case (DBusConnection.busName, BlueZ.Signal.nameOwnerChanged):
            guard signal.body.count == 3, signal.body[0].stringValue == BlueZ.service else { return .irrelevant }
            let owner = signal.body[2].stringValue ?? ""
            objects.removeAll()
            return .ownerChanged(owner.isEmpty ? nil : owner)
        case (BlueZ.objectManagerInterface, BlueZ.Signal.interfacesAdded):
            guard signal.body.count == 2, let path = signal.body[0].objectPathValue else { return .irrelevant }
            let added = Self.interfaces(signal.body[1])
            objects[path, default: [:]].merge(added) { _, new in new }
            return .interfacesAdded(path, Set(added.keys), properties: added)
        case (BlueZ.objectManagerInterface, BlueZ.Signal.interfacesRemoved):
            guard signal.body.count == 2, let path = signal.body[0].objectPathValue else { return .irrelevant }
            let removed = Set((signal.body[1].arrayValue ?? []).compactMap(\.stringValue))
            for name in removed { objects[path]?[name] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
            // A removed adapter takes its devices with it, whether or not bluetoothd says so.
            if removed.contains(BlueZ.adapterInterface) {
                for candidate in objects.keys where candidate != path && candidate.isDescendant(of: path) {
                    objects[candidate] = nil
                }
            }
            return .interfacesRemoved(path, removed)
        case (BlueZ.propertiesInterface, BlueZ.Signal.propertiesChanged):
            // The hot path: one signal per advertisement received. Merged in place, without an
            // intermediate dictionary.
            guard signal.body.count == 3, let path = signal.path, case .string(let interface) = signal.body[0],
                  let changed = PropertyChanges(signal.body[1]), objects[path]?[interface] != nil
            else { return .irrelevant }
            let invalidated = (signal.body[2].arrayValue ?? []).compactMap(\.stringValue)
            Self.merge(changed, invalidated: invalidated, into: &objects[path]![interface]!)
            return .propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return .irrelevant
        }
    }

    private static func merge(_ changed: PropertyChanges, invalidated: [String],
                              into properties: inout [String: DBusValue]) {
        for (name, value) in changed { properties[name] = value }
        for name in invalidated { properties[name] = nil }
    }

    /// Records the properties of one interface, read separately.
    mutating func set(_ path: DBusObjectPath, interface: String, properties: [String: DBusValue]) {
        objects[path, default: [:]][interface] = properties
    }

    func has(_ path: DBusObjectPath, interface: String) -> Bool {
        objects[path]?[interface] != nil
    }

    var adapters: [BlueZAdapter] {
        objects.compactMap { BlueZAdapter(path: $0.key, interfaces: $0.value) }
    }

    func adapter(at path: DBusObjectPath) -> BlueZAdapter? {
        objects[path].flatMap { BlueZAdapter(path: path, interfaces: $0) }
    }

    func device(at path: DBusObjectPath) -> BlueZDevice? {
        objects[path]?[BlueZ.deviceInterface].map { BlueZDevice(path: path, properties: $0) }
    }

    func devices(on adapter: DBusObjectPath) -> [BlueZDevice] {
        objects.keys.sorted().compactMap { path in
            guard let device = device(at: path), device.adapter == adapter || (device.adapter == nil && path.isDescendant(of: adapter))
            else { return nil }
            return device
        }
    }
}

/// The changed properties of a PropertiesChanged signal (`a{sv}`), read in place: names with their
/// values unwrapped from the variant, in the order sent.
struct PropertyChanges: Sendable, Sequence {
    private let entries: [DBusDictionaryEntry]

    /// Nil unless `value` is a dictionary keyed by strings.
    init?(_ value: DBusValue) {
        guard case .dictionary(let key, _, let entries) = value, key.rawValue == "s" else { return nil }
        self.entries = entries
    }

    init(_ properties: [String: DBusValue]) {
        entries = properties.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) }
    }

    subscript(name: String) -> DBusValue? {
        for (candidate, value) in self where candidate == name { return value }
        return nil
    }

    var names: [String] { map(\.0) }

    func makeIterator() -> Iterator { Iterator(entries: entries) }

    struct Iterator: IteratorProtocol {
        let entries: [DBusDictionaryEntry]
        var index = 0

        mutating func next() -> (String, DBusValue)? {
            while index < entries.count {
                defer { index += 1 }
                if case .string(let name) = entries[index].key { return (name, entries[index].value.unwrapped) }
            }
            return nil
        }
    }
}
