import DBus

/// An `org.bluez.Adapter1` object and, when present, its `LEAdvertisingManager1`, decoded at
/// the edge.
public struct BlueZAdapter: Sendable, Hashable {
    public var path: DBusObjectPath
    /// The kernel's name for it, e.g. `hci0`.
    public var name: String { path.lastElement }
    public var address: String
    public var powered: Bool
    public var discovering: Bool
    /// Discoverable (which needs connectable) or connectable: then the kernel advertises even a
    /// broadcast from the adapter's public address (hardware-notes.md, "Rotating identities").
    /// `Connectable` is nil where bluetoothd does not expose it.
    public var discoverable: Bool = false
    public var connectable: Bool? = nil
    /// Nil when the adapter cannot advertise through BlueZ (no LEAdvertisingManager1).
    public var advertising: AdvertisingCapacity?

    public struct AdvertisingCapacity: Sendable, Hashable {
        public var activeInstances: Int
        /// BlueZ calls this SupportedInstances, but it counts the instances still free.
        public var freeInstances: Int
        /// Whether bluetoothd reads MinInterval/MaxInterval of advertisements. BlueZ has no direct
        /// way to ask; it exposes SupportedCapabilities under the same condition (BlueZ 5.77, or
        /// experimental features enabled with `bluetoothd -E`), so that stands in for it.
        public var controlsInterval: Bool
    }

    init?(path: DBusObjectPath, interfaces: [String: [String: DBusValue]]) {
        guard let properties = interfaces[BlueZ.adapterInterface] else { return nil }
        self.path = path
        address = properties[BlueZ.Property.address]?.stringValue ?? "unknown"
        powered = properties[BlueZ.Property.powered]?.boolValue ?? false
        discovering = properties[BlueZ.Property.discovering]?.boolValue ?? false
        discoverable = properties[BlueZ.Property.discoverable]?.boolValue ?? false
        connectable = properties[BlueZ.Property.connectable]?.boolValue
        if let manager = interfaces[BlueZ.advertisingManagerInterface] {
            advertising = AdvertisingCapacity(
                activeInstances: manager[BlueZ.Property.activeInstances]?.intValue ?? 0,
                freeInstances: manager[BlueZ.Property.supportedInstances]?.intValue ?? 0,
                controlsInterval: manager[BlueZ.Property.supportedCapabilities] != nil)
        }
    }

    /// Whether an advertisement here goes out from the public address, so rotating identities
    /// can be linked from period to period by it.
    public var advertisesFromPublicAddress: Bool { discoverable || connectable == true }

    /// The adapter to use: the one named `name`, or else the first powered one, or else the first.
    static func choose(from adapters: [BlueZAdapter], named name: String?) -> BlueZAdapter? {
        let sorted = adapters.sorted { $0.path < $1.path }
        if let name { return sorted.first { $0.name == name } }
        return sorted.first { $0.powered } ?? sorted.first
    }
}
