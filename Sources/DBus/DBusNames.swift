/// A D-Bus object path such as `/org/bluez/hci0`, checked against the specification's syntax.
public struct DBusObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    /// Returns nil unless `rawValue` is a valid object path: `/`, or `/`-separated non-empty
    /// elements of `[A-Za-z0-9_]` with no trailing slash.
    public init?(_ rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// For literals in source, which are checked by the tests that use them; an invalid literal is
    /// rejected when the message carrying it is built, never sent.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// Whether `self` equals `ancestor` or lies below it.
    public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    /// The last element (`hci0` for `/org/bluez/hci0`).
    public var lastElement: String {
        String(rawValue.split(separator: "/").last ?? "")
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    static func isValid(_ text: String) -> Bool {
        // One pass: "/" alone, or "/element(/element)*" with elements of [A-Za-z0-9_].
        var previousWasSlash = false
        for (index, byte) in text.utf8.enumerated() {
            if byte == 0x2F {  // "/"
                if previousWasSlash && index > 0 { return false }
                previousWasSlash = true
            } else {
                guard index > 0 else { return false }
                guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                else { return false }
                previousWasSlash = false
            }
        }
        return text == "/" || (!text.isEmpty && !previousWasSlash)
    }

    /// For paths libdbus has already validated (every received message is).
    init(validated rawValue: String) {
        self.rawValue = rawValue
    }
}

/// A D-Bus type signature such as `a{sv}`; validity is checked by libdbus when it is marshalled.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }
}
