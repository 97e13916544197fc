/// Answers method calls to exported objects, including the standard interfaces every D-Bus
/// object is expected to have. Pure: it maps a call and the exported objects to a reply.
enum ObjectDispatcher {
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    static let peerInterface = "org.freedesktop.DBus.Peer"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    /// The reply to `call`, or nil when it is not a method call.
    static func reply(to call: DBusMessage, objects: [DBusObjectPath: DBusExportedObject]) -> DBusMessage? {
        guard call.kind == .methodCall, let path = call.path, let member = call.member else { return nil }
        let result: Result<[DBusValue], DBusError>
        do {
            result = .success(try answer(call, path: path, member: member, objects: objects))
        } catch let error as DBusError {
            result = .failure(error)
        } catch {
            result = .failure(DBusError(name: DBusError.failedName, message: "\(error)"))
        }
        var reply: DBusMessage
        switch result {
        case .success(let body):
            reply = DBusMessage(kind: .methodReturn, body: body)
        case .failure(let error):
            reply = DBusMessage(kind: .error, body: [.string(error.message)])
            reply.errorName = error.name
        }
        reply.replySerial = call.serial
        reply.destination = call.sender
        return reply
    }

    private static func answer(_ call: DBusMessage, path: DBusObjectPath, member: String,
                               objects: [DBusObjectPath: DBusExportedObject]) throws -> [DBusValue] {
        if call.interface == peerInterface {
            guard member == "Ping" else { throw unknownMethod(call) }
            return []
        }
        if call.interface == introspectableInterface, member == "Introspect" {
            let children = childNames(of: path, in: objects)
            guard objects[path] != nil || !children.isEmpty else { throw unknownObject(path) }
            return [.string(Introspection.xml(for: objects[path], children: children))]
        }
        guard let object = objects[path] else { throw unknownObject(path) }
        switch (call.interface, member) {
        case (propertiesInterface, "Get"):
            try expect(call, "ss")
            let interfaceName = call.body[0].stringValue ?? ""
            let name = call.body[1].stringValue ?? ""
            guard let interface = object.interface(named: interfaceName) else { throw unknownInterface(interfaceName) }
            guard let value = interface.properties[name] else {
                throw DBusError(name: DBusError.unknownPropertyName, message: "no property \(name) on \(interfaceName)")
            }
            return [.variant(value)]
        case (propertiesInterface, "GetAll"):
            try expect(call, "s")
            let interfaceName = call.body[0].stringValue ?? ""
            guard let interface = object.interface(named: interfaceName) else { throw unknownInterface(interfaceName) }
            return [interface.propertyDictionary]
        case (propertiesInterface, "Set"):
            try expect(call, "ssv")
            throw DBusError(name: DBusError.propertyReadOnlyName, message: "the properties of \(path) are read-only")
        case (objectManagerInterface, "GetManagedObjects") where object.isObjectManager:
            try expect(call, "")
            return [managedObjects(below: path, objects: objects)]
        default:
            let candidates = call.interface.map { name in object.interfaces.filter { $0.name == name } } ?? object.interfaces
            if let name = call.interface, candidates.isEmpty { throw unknownInterface(name) }
            guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == member } }).first else {
                throw unknownMethod(call)
            }
            try expect(call, method.inputSignature)
            return try method.handler(call)
        }
    }

    private static func expect(_ call: DBusMessage, _ signature: String) throws {
        guard call.signature == signature else {
            throw DBusError.invalidArguments(
                "\(call.member ?? "the method") takes (\(signature)), not (\(call.signature))")
        }
    }

    /// `a{oa{sa{sv}}}` of every exported object strictly below `root`.
    static func managedObjects(below root: DBusObjectPath, objects: [DBusObjectPath: DBusExportedObject]) -> DBusValue {
        let entries = objects.values
            .filter { $0.path != root && $0.path.isDescendant(of: root) }
            .sorted { $0.path < $1.path }
            .map { DBusDictionaryEntry(.objectPath($0.path), interfacesValue($0)) }
        return .dictionary(key: "o", value: "a{sa{sv}}", entries)
    }

    private static func interfacesValue(_ object: DBusExportedObject) -> DBusValue {
        .dictionary(key: "s", value: "a{sv}", object.interfaces.map {
            DBusDictionaryEntry(.string($0.name), $0.propertyDictionary)
        })
    }

    /// The object manager above `object`, if one is exported.
    private static func manager(of object: DBusExportedObject, objects: [DBusObjectPath: DBusExportedObject]) -> DBusExportedObject? {
        objects.values
            .filter { $0.isObjectManager && $0.path != object.path && object.path.isDescendant(of: $0.path) }
            .max { $0.path.rawValue.count < $1.path.rawValue.count }
    }

    static func interfacesAdded(_ object: DBusExportedObject, objects: [DBusObjectPath: DBusExportedObject]) -> DBusMessage? {
        guard let manager = manager(of: object, objects: objects) else { return nil }
        return .signal(path: manager.path, interface: objectManagerInterface, member: "InterfacesAdded",
                       body: [.objectPath(object.path), interfacesValue(object)])
    }

    static func interfacesRemoved(_ object: DBusExportedObject, objects: [DBusObjectPath: DBusExportedObject]) -> DBusMessage? {
        guard let manager = manager(of: object, objects: objects) else { return nil }
        return .signal(path: manager.path, interface: objectManagerInterface, member: "InterfacesRemoved",
                       body: [.objectPath(object.path), .strings(object.interfaces.map(\.name))])
    }

    /// Names of the nodes directly below `path` that lead to exported objects.
    static func childNames(of path: DBusObjectPath, in objects: [DBusObjectPath: DBusExportedObject]) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        for candidate in objects.keys where candidate.rawValue.hasPrefix(prefix) && candidate != path {
            if let first = candidate.rawValue.dropFirst(prefix.count).split(separator: "/").first {
                names.insert(String(first))
            }
        }
        return names.sorted()
    }

    private static func unknownObject(_ path: DBusObjectPath) -> DBusError {
        DBusError(name: DBusError.unknownObjectName, message: "no object at \(path)")
    }

    private static func unknownInterface(_ name: String) -> DBusError {
        DBusError(name: DBusError.unknownInterfaceName, message: "no interface \(name) here")
    }

    private static func unknownMethod(_ call: DBusMessage) -> DBusError {
        DBusError(name: DBusError.unknownMethodName,
                  message: "no method \(call.member ?? "") with signature (\(call.signature)) on \(call.interface ?? "any interface")")
    }
}
