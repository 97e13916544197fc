/// A signal match rule: sent to the bus with `AddMatch` so the bus routes matching signals to us,
/// and applied locally to hand each signal to the subscriptions that asked for it.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A well-known or unique bus name. The bus resolves well-known names to their current owner,
    /// so a rule on `org.bluez` keeps matching after bluetoothd restarts. Locally only unique names
    /// and the bus itself can be compared; a well-known sender is left to the bus.
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    /// Matches `path` and every path below it.
    public var pathNamespace: DBusObjectPath?
    /// The first body argument, when it is a string.
    public var arg0: String?

    public init(sender: String? = nil, interface: String? = nil, member: String? = nil,
                path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, arg0: String? = nil) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax, e.g. `type='signal',sender='org.bluez',member='InterfacesAdded'`.
    public var description: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only the quote itself needs escaping, as '\''.
            parts.append("\(key)='\(value.replacingAll("'", with: "'\\''"))'")
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether a received signal satisfies the rule (see ``sender`` for what is left to the bus).
    public func matches(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender, sender.hasPrefix(":") || sender == "org.freedesktop.DBus", message.sender != sender {
            return false
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isDescendant(of: pathNamespace) else { return false }
        }
        if let arg0 {
            guard case .string(let first)? = message.body.first, first == arg0 else { return false }
        }
        return true
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
