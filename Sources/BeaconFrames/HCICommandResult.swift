/// A controller's status code for a command. Core Specification Vol 1, Part F (controller error
/// codes); a growing number space, with the ones worth naming.
public struct HCIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let unsupportedFeature = HCIStatus(rawValue: 0x11)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    public static let limitReached = HCIStatus(rawValue: 0x43)

    public var description: String {
        let names: [UInt8: String] = [
            0x00: "success", 0x01: "Unknown HCI Command", 0x03: "Hardware Failure", 0x07: "Memory Capacity Exceeded",
            0x0C: "Command Disallowed", 0x11: "Unsupported Feature or Parameter Value",
            0x12: "Invalid HCI Command Parameters", 0x42: "Unknown Advertising Identifier", 0x43: "Limit Reached",
        ]
        return (names[rawValue] ?? "error") + " (0x" + hexByte(rawValue) + ")"
    }
}

/// The controller's answer to a command: Command Complete (event 0x0E, with return parameters)
/// or Command Status (event 0x0F, for commands that complete later). Core Specification Vol 4,
/// Part E, §7.7.14 and §7.7.15.
public struct HCICommandResult: Sendable, Hashable {
    public var opcode: HCIOpcode
    /// From Command Status, or the first return parameter of Command Complete (every LE command
    /// we send returns its status first); success when Command Complete returned nothing.
    public var status: HCIStatus
    /// Command Complete's return parameters after the status byte; empty for Command Status.
    public var returnParameters: [UInt8]
    /// How many more commands the controller accepts now.
    public var commandCredits: UInt8
}

extension HCIEvent {
    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F

    /// The command result an event packet (H4 byte first, or the event code first) carries; nil
    /// for any other event. Throws with byte offsets when it is one and its lengths disagree.
    public static func commandResult(_ bytes: [UInt8]) throws(FrameError) -> HCICommandResult? {
        let start = bytes.first == h4EventPacketType ? 1 : 0
        guard bytes.count > start, bytes[start] == commandCompleteCode || bytes[start] == commandStatusCode else { return nil }
        var reader = ByteReader(bytes, startingAt: start)
        let code = try reader.uint8("HCI event code")
        let parameterLength = Int(try reader.uint8("HCI parameter total length"))
        guard parameterLength == reader.remaining else {
            throw .wrongLength(what: "HCI parameter total length", offset: reader.absoluteOffset - 1,
                               expected: "\(reader.remaining) (the bytes present)", found: parameterLength)
        }
        if code == commandStatusCode {
            let status = HCIStatus(rawValue: try reader.uint8("command status"))
            let credits = try reader.uint8("number of HCI command packets")
            let opcode = HCIOpcode(rawValue: try reader.uint16LE("command opcode"))
            return HCICommandResult(opcode: opcode, status: status, returnParameters: [], commandCredits: credits)
        }
        let credits = try reader.uint8("number of HCI command packets")
        let opcode = HCIOpcode(rawValue: try reader.uint16LE("command opcode"))
        let status = reader.isAtEnd ? HCIStatus.success : HCIStatus(rawValue: try reader.uint8("command status"))
        return HCICommandResult(opcode: opcode, status: status, returnParameters: reader.rest(), commandCredits: credits)
    }
}
