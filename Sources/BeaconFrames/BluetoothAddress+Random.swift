extension BluetoothAddress {
    /// What a random device address is, by its two most significant bits. Core Specification
    /// Vol 6, Part B, §1.3.2.
    public enum RandomKind: Sendable, Hashable {
        /// 0b00: changed as often as the device likes, and resolvable by no one.
        case nonResolvablePrivate
        /// 0b01: a hash of a random part under an identity resolving key (IRK).
        case resolvablePrivate
        /// 0b10: reserved for future use.
        case reserved
        /// 0b11: kept for at least a power cycle.
        case `static`
    }

    /// The kind this address would be as a random address (its top two bits).
    public var randomKind: RandomKind {
        switch value >> 46 {
        case 0b00: .nonResolvablePrivate
        case 0b01: .resolvablePrivate
        case 0b10: .reserved
        default: .static
        }
    }

    /// A fresh non-resolvable private address, Core Specification Vol 6, Part B, §1.3.2.2: the
    /// two top bits 0, the other 46 random and neither all 0 nor all 1, and never equal to
    /// `publicAddress` (the device's own). The kind of address the Linux kernel gives a
    /// non-connectable advertisement when privacy is off.
    public static func nonResolvablePrivate(using generator: inout some RandomNumberGenerator,
                                            avoiding publicAddress: BluetoothAddress? = nil) -> BluetoothAddress {
        while true {
            let bits = generator.next() & 0x3FFF_FFFF_FFFF
            guard bits != 0, bits != 0x3FFF_FFFF_FFFF, bits != publicAddress?.value else { continue }
            return BluetoothAddress(value: bits)
        }
    }

    /// A fresh non-resolvable private address from the system's random number generator.
    public static func nonResolvablePrivate(avoiding publicAddress: BluetoothAddress? = nil) -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        return nonResolvablePrivate(using: &generator, avoiding: publicAddress)
    }

    /// The address whose 48 bits are the low 48 of `value`.
    init(value: UInt64) {
        self.init(UInt8(truncatingIfNeeded: value >> 40), UInt8(truncatingIfNeeded: value >> 32),
                  UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                  UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }
}
