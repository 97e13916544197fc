/// An object this connection serves to the bus, as a set of interfaces.
///
/// The connection answers `org.freedesktop.DBus.Properties`, `Introspectable` and `Peer` for it,
/// and `ObjectManager` when ``isObjectManager`` is set. Method handlers run on the connection's
/// thread and must return promptly: hand longer work to a task.
public struct DBusExportedObject: Sendable {
    public var path: DBusObjectPath
    public var interfaces: [DBusExportedInterface]
    /// Serve `GetManagedObjects` here for every exported object below this path.
    public var isObjectManager: Bool

    public init(path: DBusObjectPath, interfaces: [DBusExportedInterface], isObjectManager: Bool = false) {
        self.path = path
        self.interfaces = interfaces
        self.isObjectManager = isObjectManager
    }

    func interface(named name: String) -> DBusExportedInterface? {
        interfaces.first { $0.name == name }
    }
}

/// One interface of an exported object: its methods and read-only properties.
public struct DBusExportedInterface: Sendable {
    public var name: String
    public var methods: [DBusExportedMethod]
    public var properties: [String: DBusValue]

    public init(name: String, methods: [DBusExportedMethod] = [], properties: [String: DBusValue] = [:]) {
        self.name = name
        self.methods = methods
        self.properties = properties
    }

    /// The properties as the `a{sv}` that `GetAll` returns, sorted by name.
    var propertyDictionary: DBusValue {
        .stringVariantDictionary(properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}

/// A method of an exported interface.
public struct DBusExportedMethod: Sendable {
    public typealias Handler = @Sendable (DBusMessage) throws -> [DBusValue]

    public var name: String
    /// The argument signature calls must have; others get `InvalidArgs`.
    public var inputSignature: String
    /// The signature of what ``handler`` returns (for introspection).
    public var outputSignature: String
    /// Returns the reply body; a thrown ``DBusError`` becomes an error reply with its name, any other
    /// error `org.freedesktop.DBus.Error.Failed`.
    public var handler: Handler

    public init(name: String, inputSignature: String = "", outputSignature: String = "",
                handler: @escaping Handler) {
        self.name = name
        self.inputSignature = inputSignature
        self.outputSignature = outputSignature
        self.handler = handler
    }
}
