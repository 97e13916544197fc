/// An AD type: the second byte of an AD structure (Core Specification Supplement, Part A, and
/// the Assigned Numbers document, "Common Data Types"). The space grows, so this is a raw-value
/// struct with constants for the types Nearplay reads, not a closed enum.
public struct ADType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteServiceUUIDs16 = ADType(0x02)
    public static let completeServiceUUIDs16 = ADType(0x03)
    public static let incompleteServiceUUIDs32 = ADType(0x04)
    public static let completeServiceUUIDs32 = ADType(0x05)
    public static let incompleteServiceUUIDs128 = ADType(0x06)
    public static let completeServiceUUIDs128 = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let serviceData16 = ADType(0x16)
    public static let serviceData32 = ADType(0x20)
    public static let serviceData128 = ADType(0x21)
    public static let manufacturerSpecificData = ADType(0xFF)

    public var description: String {
        let names: [UInt8: String] = [
            0x01: "Flags", 0x02: "Incomplete List of 16-bit Service UUIDs",
            0x03: "Complete List of 16-bit Service UUIDs", 0x04: "Incomplete List of 32-bit Service UUIDs",
            0x05: "Complete List of 32-bit Service UUIDs", 0x06: "Incomplete List of 128-bit Service UUIDs",
            0x07: "Complete List of 128-bit Service UUIDs", 0x08: "Shortened Local Name",
            0x09: "Complete Local Name", 0x0A: "Tx Power Level", 0x16: "Service Data - 16-bit UUID",
            0x20: "Service Data - 32-bit UUID", 0x21: "Service Data - 128-bit UUID",
            0xFF: "Manufacturer Specific Data",
        ]
        return names[rawValue] ?? "AD type 0x\(hexByte(rawValue))"
    }
}

/// A Bluetooth SIG company identifier, as carried little-endian at the start of manufacturer
/// specific data.
public struct CompanyIdentifier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// Apple, Inc.: iBeacon.
    public static let apple = CompanyIdentifier(0x004C)
    /// Radius Networks: the AltBeacon reference company.
    public static let radiusNetworks = CompanyIdentifier(0x0118)

    public var description: String {
        let hex = "0x" + hexByte(UInt8(rawValue >> 8)) + hexByte(UInt8(rawValue & 0xFF))
        switch self {
        case .apple: return hex + " (Apple)"
        case .radiusNetworks: return hex + " (Radius Networks)"
        default: return hex
        }
    }
}
