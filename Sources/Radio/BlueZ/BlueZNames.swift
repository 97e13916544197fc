import DBus

/// Every BlueZ name Nearplay uses: the service, its interfaces, methods, properties and errors
/// (BlueZ doc/org.bluez.*.rst). Nothing else in the package spells them.
enum BlueZ {
    static let service = "org.bluez"
    static let root: DBusObjectPath = "/"
    static let objectNamespace: DBusObjectPath = "/org/bluez"

    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"

    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    enum Method {
        static let getManagedObjects = "GetManagedObjects"
        static let setDiscoveryFilter = "SetDiscoveryFilter"
        static let startDiscovery = "StartDiscovery"
        static let stopDiscovery = "StopDiscovery"
        static let registerAdvertisement = "RegisterAdvertisement"
        static let unregisterAdvertisement = "UnregisterAdvertisement"
        static let release = "Release"
        static let getAll = "GetAll"
    }

    enum Signal {
        static let interfacesAdded = "InterfacesAdded"
        static let interfacesRemoved = "InterfacesRemoved"
        static let propertiesChanged = "PropertiesChanged"
        static let nameOwnerChanged = "NameOwnerChanged"
    }

    enum Property {
        static let address = "Address"
        static let addressType = "AddressType"
        static let adapter = "Adapter"
        static let powered = "Powered"
        static let discovering = "Discovering"
        static let discoverable = "Discoverable"
        static let connectable = "Connectable"
        static let rssi = "RSSI"
        static let manufacturerData = "ManufacturerData"
        static let serviceData = "ServiceData"
        static let advertisingFlags = "AdvertisingFlags"
        static let advertisingData = "AdvertisingData"
        static let activeInstances = "ActiveInstances"
        static let supportedInstances = "SupportedInstances"
        static let supportedCapabilities = "SupportedCapabilities"
        static let type = "Type"
        static let minInterval = "MinInterval"
        static let maxInterval = "MaxInterval"
    }

    /// Discovery filter keys (Adapter1.SetDiscoveryFilter).
    enum Filter {
        static let transport = "Transport"
        static let duplicateData = "DuplicateData"
        static let rssi = "RSSI"
    }

    enum ErrorName {
        static let notPermitted = "org.bluez.Error.NotPermitted"
        static let notReady = "org.bluez.Error.NotReady"
        static let inProgress = "org.bluez.Error.InProgress"
        static let alreadyExists = "org.bluez.Error.AlreadyExists"
        static let doesNotExist = "org.bluez.Error.DoesNotExist"
        static let invalidArguments = "org.bluez.Error.InvalidArguments"
        static let invalidLength = "org.bluez.Error.InvalidLength"
        static let notSupported = "org.bluez.Error.NotSupported"
        static let failed = "org.bluez.Error.Failed"
        static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    }

    /// The signals a BlueZ client follows, subscribed before the first `GetManagedObjects`.
    static let matchRules: [MatchRule] = [
        MatchRule(sender: service, interface: objectManagerInterface, path: root),
        MatchRule(sender: service, interface: propertiesInterface, member: Signal.propertiesChanged,
                  pathNamespace: objectNamespace),
        MatchRule(sender: DBusConnection.busName, interface: DBusConnection.busName,
                  member: Signal.nameOwnerChanged, path: DBusConnection.busPath, arg0: service),
    ]
}
