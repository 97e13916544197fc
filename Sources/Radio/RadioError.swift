import DBus

/// A failure of a radio backend that retrying will not fix, with what to do about it.
public struct RadioError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Every advertising instance of the controller is taken.
        public static let noFreeAdvertisingInstance = Code(rawValue: "noFreeAdvertisingInstance")
        /// The Bluetooth service refused the advertisement (too long, invalid, unsupported).
        public static let advertisementRejected = Code(rawValue: "advertisementRejected")
        /// The D-Bus policy does not let this user talk to the Bluetooth service.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// A named adapter does not exist or cannot do what was asked.
        public static let adapterUnusable = Code(rawValue: "adapterUnusable")
        /// The named adapter is not there (yet): waiting may help.
        public static let adapterMissing = Code(rawValue: "adapterMissing")
        /// The Bluetooth controller answered a command with an error status (raw HCI).
        public static let controllerRefused = Code(rawValue: "controllerRefused")
        /// The Bluetooth controller did not answer a command in time (raw HCI).
        public static let controllerUnresponsive = Code(rawValue: "controllerUnresponsive")
        /// Something else (bluetoothd, another program) is scanning or advertising on the
        /// controller (raw HCI).
        public static let controllerBusy = Code(rawValue: "controllerBusy")
        /// The simulated air's hub refused the client (a device its scenario does not name, another
        /// protocol version).
        public static let simulatedAirRefused = Code(rawValue: "simulatedAirRefused")
        /// The simulated air's socket cannot be used however long one waits (a path too long,
        /// something other than a socket there).
        public static let simulatedAirUnusable = Code(rawValue: "simulatedAirUnusable")
        /// The bus bluetoothd is on cannot be used (no dbus-daemon there, a wrong address), or it
        /// failed in a way no BlueZ answer explains.
        public static let busUnavailable = Code(rawValue: "busUnavailable")
    }

    public var code: Code
    /// A sentence saying what happened and what to do.
    public var message: String
    /// The error behind it, if any (a D-Bus error from the BlueZ backend), for the log: the code
    /// and message say what callers need, so none of them has to know D-Bus.
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        guard let cause else { return message }
        return "\(message) (\(cause))"
    }

    /// `error` as a radio error: a D-Bus failure becomes ``Code/busUnavailable``, saying what to
    /// check; anything else (a RadioError, a cancellation) passes unchanged. The BlueZ backend's
    /// public calls throw through this, so that no caller needs to know D-Bus.
    static func wrapping(_ error: any Error, busAddress: String?) -> any Error {
        guard let error = error as? DBusError else { return error }
        let address = busAddress ?? DBusConnection.systemBusAddress
        return RadioError(.busUnavailable,
                          "Cannot use the D-Bus system bus at \(address): is dbus running? Set DBUS_SYSTEM_BUS_ADDRESS to use another bus.",
                          cause: error)
    }

    static func accessDenied(_ action: String, cause: DBusError) -> RadioError {
        RadioError(.permissionDenied,
                   "The D-Bus policy does not allow this user to \(action). Add the user to the `bluetooth` "
                       + "group (`sudo usermod -aG bluetooth $USER`, then log in again) or see hardware-notes.md.",
                   cause: cause)
    }
}
