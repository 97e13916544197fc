/// An error as D-Bus names it: a reply of type error from a peer, or a local failure given the
/// standard name that libdbus or the bus would use (`org.freedesktop.DBus.Error.NoReply`, …).
///
/// The set of names is open (every service defines its own), hence a struct rather than an enum.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, e.g. `org.bluez.Error.NotPermitted`.
    public var name: String
    /// The human-readable message the peer sent, possibly empty.
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String {
        message.isEmpty ? name : "\(name): \(message)"
    }

    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    public static let noMemoryName = "org.freedesktop.DBus.Error.NoMemory"
    public static let invalidArgumentsName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterfaceName = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownPropertyName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnlyName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"

    public static func disconnected(_ message: String = "the bus connection is closed") -> DBusError {
        DBusError(name: disconnectedName, message: message)
    }

    public static func invalidArguments(_ message: String) -> DBusError {
        DBusError(name: invalidArgumentsName, message: message)
    }

    /// True for the errors that mean the connection itself is gone.
    public var isDisconnection: Bool { name == Self.disconnectedName }
}
