import BeaconFrames
import Foundation
import SystemSupport

/// What the simulated air's hub and clients share: addresses, the default socket, names.
public enum SimulatedAir {
    /// The random static address a device or beacon has on the simulated air, the same on every
    /// run: 48 bits of an FNV-1a hash of the name, with the two top bits set as the Core
    /// specification (Vol 6, Part B, 1.3.2.1) requires of a static address.
    public static func address(of name: String) -> BluetoothAddress {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        var bits = (hash ^ (hash >> 48)) & 0x3FFF_FFFF_FFFF
        // The random part may be neither all zeros nor all ones.
        if bits == 0 || bits == 0x3FFF_FFFF_FFFF { bits = 1 }
        let value = bits | 0xC000_0000_0000
        return BluetoothAddress(
            UInt8(truncatingIfNeeded: value >> 40), UInt8(truncatingIfNeeded: value >> 32),
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }

    /// `$XDG_RUNTIME_DIR/nearplay/air.sock`, or `/tmp/nearplay-$UID/air.sock` without one.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        XDGDirectories(environment: environment).runtimeDirectory + "/air.sock"
    }

    /// Longest device name, in UTF-8 bytes.
    public static let longestDeviceName = 64

    /// Why `name` cannot name a device, or nil when it can.
    public static func problem(withDeviceName name: String) -> String? {
        if name.isEmpty { return "a device name cannot be empty" }
        if name.utf8.count > longestDeviceName { return "a device name has at most \(longestDeviceName) bytes" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a device name cannot hold control characters"
        }
        return nil
    }
}

