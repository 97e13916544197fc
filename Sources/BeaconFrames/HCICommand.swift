import SystemSupport

/// An HCI command opcode: the OGF in the top 6 bits, the OCF in the low 10. Core Specification
/// Vol 4, Part E, §5.4.1. A growing number space, so a raw-value struct with the ones we send.
public struct HCIOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(group: UInt16, command: UInt16) { rawValue = group << 10 | command & 0x03FF }

    /// LE Controller commands (OGF 0x08), §7.8.
    static func le(_ command: UInt16) -> HCIOpcode { HCIOpcode(group: 0x08, command: command) }

    /// Reset (OGF 0x03, §7.3.2): the backend never sends it, but sees the kernel send it when it
    /// brings the controller up again, which ends whatever was set up before.
    public static let reset = HCIOpcode(group: 0x03, command: 0x0003)
    public static let leReadLocalSupportedFeatures = le(0x0003)
    public static let leSetRandomAddress = le(0x0005)
    public static let leSetAdvertisingParameters = le(0x0006)
    public static let leSetAdvertisingData = le(0x0008)
    public static let leSetAdvertisingEnable = le(0x000A)
    public static let leSetScanParameters = le(0x000B)
    public static let leSetScanEnable = le(0x000C)
    public static let leSetAdvertisingSetRandomAddress = le(0x0035)
    public static let leSetExtendedAdvertisingParameters = le(0x0036)
    public static let leSetExtendedAdvertisingData = le(0x0037)
    public static let leSetExtendedAdvertisingEnable = le(0x0039)
    public static let leRemoveAdvertisingSet = le(0x003C)
    public static let leSetExtendedScanParameters = le(0x0041)
    public static let leSetExtendedScanEnable = le(0x0042)

    public var description: String {
        let names: [HCIOpcode: String] = [
            .reset: "Reset",
            .leReadLocalSupportedFeatures: "LE Read Local Supported Features",
            .leSetRandomAddress: "LE Set Random Address",
            .leSetAdvertisingParameters: "LE Set Advertising Parameters",
            .leSetAdvertisingData: "LE Set Advertising Data",
            .leSetAdvertisingEnable: "LE Set Advertising Enable",
            .leSetScanParameters: "LE Set Scan Parameters",
            .leSetScanEnable: "LE Set Scan Enable",
            .leSetAdvertisingSetRandomAddress: "LE Set Advertising Set Random Address",
            .leSetExtendedAdvertisingParameters: "LE Set Extended Advertising Parameters",
            .leSetExtendedAdvertisingData: "LE Set Extended Advertising Data",
            .leSetExtendedAdvertisingEnable: "LE Set Extended Advertising Enable",
            .leRemoveAdvertisingSet: "LE Remove Advertising Set",
            .leSetExtendedScanParameters: "LE Set Extended Scan Parameters",
            .leSetExtendedScanEnable: "LE Set Extended Scan Enable",
        ]
        let code = "0x" + hexByte(UInt8(rawValue >> 8)) + hexByte(UInt8(rawValue & 0xFF))
        return names[self].map { "\($0) (\(code))" } ?? "HCI command \(code)"
    }
}

/// One HCI command packet: an opcode and its parameters. Core Specification Vol 4, Part E,
/// §5.4.1; the builders below follow the parameter layouts of §7.8, little-endian throughout.
public struct HCICommand: Sendable, Hashable {
    /// The H4 packet-type byte of a command.
    public static let h4CommandPacketType: UInt8 = 0x01

    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(_ opcode: HCIOpcode, _ parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// The packet as written to an HCI socket: 0x01, opcode (LE), parameter length, parameters.
    public var packet: [UInt8] {
        [Self.h4CommandPacketType, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(parameters.count)] + parameters
    }

    /// A time in the controller's 0.625 ms slots, clamped to `range`.
    public static func slots(_ duration: Duration, in range: ClosedRange<Int>) -> Int {
        min(max(Int((duration.wholeMicroseconds * 1000 + 312_500) / 625_000), range.lowerBound), range.upperBound)
    }

    // MARK: Scanning

    /// LE Set Scan Parameters, §7.8.10: scan type (0 passive, 1 active), interval and window in
    /// 0.625 ms slots (4–16384, window ≤ interval), own address type, filter policy 0 (accept all).
    public static func leSetScanParameters(active: Bool, interval: Duration, window: Duration) -> HCICommand {
        let intervalSlots = slots(interval, in: 0x0004...0x4000)
        let windowSlots = min(slots(window, in: 0x0004...0x4000), intervalSlots)
        return HCICommand(.leSetScanParameters, [active ? 1 : 0] + le16(intervalSlots) + le16(windowSlots) + [0x00, 0x00])
    }

    /// LE Set Scan Enable, §7.8.11: enable, filter duplicates.
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(.leSetScanEnable, [enable ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    /// LE Set Extended Scan Parameters, §7.8.64, on the LE 1M PHY only: own address type, filter
    /// policy 0, PHYs 0x01, then scan type, interval and window (0x0004–0xFFFF slots).
    public static func leSetExtendedScanParameters(active: Bool, interval: Duration, window: Duration) -> HCICommand {
        let intervalSlots = slots(interval, in: 0x0004...0xFFFF)
        let windowSlots = min(slots(window, in: 0x0004...0xFFFF), intervalSlots)
        return HCICommand(.leSetExtendedScanParameters, [0x00, 0x00, 0x01, active ? 1 : 0] + le16(intervalSlots) + le16(windowSlots))
    }

    /// LE Set Extended Scan Enable, §7.8.65: enable, filter duplicates, duration 0 (until
    /// disabled), period 0.
    public static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(.leSetExtendedScanEnable, [enable ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0])
    }

    // MARK: Advertising

    /// LE Set Advertising Parameters, §7.8.5: non-connectable undirected (ADV_NONCONN_IND) at
    /// `interval` (0x0020–0x4000 slots; 0x00A0 for 100 ms), from `ownAddress` (the public address
    /// unless told), no peer, all three primary channels, no filter.
    public static func leSetAdvertisingParameters(interval: Duration, ownAddress: OwnAddressType = .public) -> HCICommand {
        let intervalSlots = le16(slots(interval, in: 0x0020...0x4000))
        return HCICommand(.leSetAdvertisingParameters,
                          intervalSlots + intervalSlots + [0x03, ownAddress.rawValue, 0x00] + [UInt8](repeating: 0, count: 6) + [0x07, 0x00])
    }

    /// LE Set Random Address, §7.8.4: the address the legacy advertising commands use with own
    /// address type random, six bytes least-significant first. Controllers refuse it (Command
    /// Disallowed) while legacy advertising is enabled, so it goes between a disable and an enable.
    public static func leSetRandomAddress(_ address: BluetoothAddress) -> HCICommand {
        HCICommand(.leSetRandomAddress, address.littleEndianBytes)
    }

    /// LE Set Advertising Data, §7.8.7: the length, then 31 bytes (zero-padded). Nil when `data`
    /// does not fit a legacy advertisement.
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand? {
        guard data.count <= 31 else { return nil }
        return HCICommand(.leSetAdvertisingData, [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// LE Set Advertising Enable, §7.8.9.
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(.leSetAdvertisingEnable, [enable ? 1 : 0])
    }

    /// LE Set Extended Advertising Parameters, §7.8.53, for a set sent with legacy PDUs
    /// (event properties 0x0010: ADV_NONCONN_IND, so phones that only scan legacy hear it):
    /// handle, properties, primary interval min and max (3 bytes each), channel map 0x07, own
    /// address type (public unless told), no peer, no filter, TX power 0x7F (no preference),
    /// primary PHY 1M, max skip 0, secondary PHY 1M, SID 0, no scan request notifications.
    public static func leSetExtendedAdvertisingParameters(handle: UInt8, interval: Duration,
                                                          ownAddress: OwnAddressType = .public) -> HCICommand {
        let intervalSlots = slots(interval, in: 0x000020...0xFFFFFF)
        let interval3 = [UInt8(intervalSlots & 0xFF), UInt8(intervalSlots >> 8 & 0xFF), UInt8(intervalSlots >> 16 & 0xFF)]
        return HCICommand(.leSetExtendedAdvertisingParameters,
                          [handle] + le16(0x0010) + interval3 + interval3 + [0x07, ownAddress.rawValue, 0x00]
                              + [UInt8](repeating: 0, count: 6) + [0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00])
    }

    /// LE Set Advertising Set Random Address, §7.8.52: the random address of one advertising set
    /// (handle, then six bytes least-significant first), used when its own address type is random.
    public static func leSetAdvertisingSetRandomAddress(handle: UInt8, _ address: BluetoothAddress) -> HCICommand {
        HCICommand(.leSetAdvertisingSetRandomAddress, [handle] + address.littleEndianBytes)
    }

    /// LE Set Extended Advertising Data, §7.8.54: handle, operation 0x03 (complete data),
    /// fragment preference 0x01 (should not fragment), length, data. Nil when `data` does not fit
    /// a legacy PDU (the set uses legacy PDUs).
    public static func leSetExtendedAdvertisingData(handle: UInt8, _ data: [UInt8]) -> HCICommand? {
        guard data.count <= 31 else { return nil }
        return HCICommand(.leSetExtendedAdvertisingData, [handle, 0x03, 0x01, UInt8(data.count)] + data)
    }

    /// LE Set Extended Advertising Enable, §7.8.56, for one set: enable, number of sets 1,
    /// handle, duration 0 (until disabled), no event limit.
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool, handle: UInt8) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingEnable, [enable ? 1 : 0, 0x01, handle, 0x00, 0x00, 0x00])
    }

    /// LE Remove Advertising Set, §7.8.59.
    public static func leRemoveAdvertisingSet(handle: UInt8) -> HCICommand {
        HCICommand(.leRemoveAdvertisingSet, [handle])
    }

    /// LE Read Local Supported Features, §7.8.3: no parameters; see ``HCILEFeatures``.
    public static let leReadLocalSupportedFeatures = HCICommand(.leReadLocalSupportedFeatures)

    private static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
}

/// Own_Address_Type of the advertising and scanning commands, §7.8.5: the controller's public
/// address, or the random address set with LE Set Random Address (LE Set Advertising Set Random
/// Address for an extended set).
public enum OwnAddressType: UInt8, Sendable, Hashable {
    case `public` = 0x00
    case random = 0x01
}

/// The controller's LE feature bits, from LE Read Local Supported Features. Core Specification
/// Vol 6, Part B, §4.6.
public struct HCILEFeatures: Sendable, Hashable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// From the command's return parameters after the status byte (8 bytes, little-endian).
    public init(returnParameters bytes: [UInt8]) throws(FrameError) {
        var reader = ByteReader(bytes)
        let low = UInt64(try reader.uint32LE("LE features (bytes 0-3)"))
        let high = UInt64(try reader.uint32LE("LE features (bytes 4-7)"))
        rawValue = high << 32 | low
    }

    /// Bit 12: the extended advertising and scanning commands.
    public var extendedAdvertising: Bool { rawValue & (1 << 12) != 0 }
}
