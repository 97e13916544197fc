/// One AD structure: a length byte, an AD type, and `length - 1` bytes of data
/// (Core Specification Vol 3, Part C, §11).
public struct ADStructure: Sendable, Hashable {
    public var type: ADType
    public var data: [UInt8]
    /// Offset of the structure's length byte in the input it was parsed from.
    public var offset: Int

    public init(type: ADType, data: [UInt8], offset: Int = 0) {
        self.type = type
        self.data = data
        self.offset = offset
    }

    /// For manufacturer specific data: the company identifier in its first two bytes (little-endian).
    public var companyIdentifier: CompanyIdentifier? {
        guard type == .manufacturerSpecificData, data.count >= 2 else { return nil }
        return CompanyIdentifier(UInt16(data[0]) | UInt16(data[1]) << 8)
    }

    /// For 16-bit service data: the service UUID in its first two bytes (little-endian).
    public var serviceUUID16: UInt16? {
        guard type == .serviceData16, data.count >= 2 else { return nil }
        return UInt16(data[0]) | UInt16(data[1]) << 8
    }

    /// The structure as sent over the air. Data longer than 254 bytes cannot be framed and is cut.
    public var bytes: [UInt8] {
        let body = data.prefix(254)
        return [UInt8(body.count + 1), type.rawValue] + body
    }
}
