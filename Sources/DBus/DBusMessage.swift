/// A D-Bus message as plain Swift values, decoupled from libdbus.
///
/// Messages are decoded on the connection's own thread as they arrive, so no libdbus handle ever
/// leaves it.
public struct DBusMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case methodCall
        case methodReturn
        case error
        case signal
    }

    public var kind: Kind
    public var serial: UInt32 = 0
    public var replySerial: UInt32?
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var sender: String?
    public var destination: String?
    /// For method calls: the caller asked for no reply, so none is sent.
    public var noReplyExpected = false
    public var body: [DBusValue]

    public init(kind: Kind, path: DBusObjectPath? = nil, interface: String? = nil,
                member: String? = nil, destination: String? = nil, body: [DBusValue] = []) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.destination = destination
        self.body = body
    }

    /// The concatenated signatures of the body, e.g. `sa{sv}as` for PropertiesChanged.
    public var signature: String { body.map(\.signatureText).joined() }

    public static func methodCall(destination: String?, path: DBusObjectPath, interface: String?,
                                  member: String, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodCall, path: path, interface: interface, member: member,
                    destination: destination, body: body)
    }

    public static func signal(path: DBusObjectPath, interface: String, member: String,
                              body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
    }

    /// A one-line description for logs: kind, names and signature, never the body.
    public var summary: String {
        let what = [interface, member].compactMap { $0 }.joined(separator: ".")
        return "\(kind) \(what) at \(path?.rawValue ?? "-") from \(sender ?? "-") (\(signature))"
    }
}
