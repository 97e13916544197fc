/// Advertising data (or scan response data): a list of AD structures, with typed access to the
/// ones Nearplay reads.
///
/// Parsing never fails as a whole: structures that are intact are kept, and what breaks the
/// framing is recorded in ``problems`` with its byte offset. A zero length byte is padding and
/// is skipped, not taken as the end: Android scan records and BlueZ captures concatenate
/// advertising and scan-response data with zero padding between them.
public struct AdvertisingData: Sendable, Hashable {
    public var structures: [ADStructure]
    /// What broke the length framing, e.g. a last structure that claims more bytes than remain.
    public var problems: [FrameError]

    public init(structures: [ADStructure]) {
        self.structures = structures
        self.problems = []
    }

    public init(parsing bytes: [UInt8]) {
        var structures: [ADStructure] = []
        var problems: [FrameError] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 {
                offset += 1
                continue
            }
            let available = bytes.count - offset - 1
            guard length <= available else {
                problems.append(.truncated(what: "AD structure", offset: offset, needed: length, available: available))
                break
            }
            let type = ADType(bytes[offset + 1])
            structures.append(ADStructure(type: type, data: Array(bytes[(offset + 2)..<(offset + 1 + length)]), offset: offset))
            offset += 1 + length
        }
        self.structures = structures
        self.problems = problems
    }

    /// The structures framed back into bytes.
    public var bytes: [UInt8] { structures.flatMap(\.bytes) }

    public func first(_ type: ADType) -> ADStructure? { structures.first { $0.type == type } }
    public func all(_ type: ADType) -> [ADStructure] { structures.filter { $0.type == type } }

    /// The Flags byte (LE Limited/General Discoverable, BR/EDR Not Supported, …).
    public var flags: UInt8? { first(.flags)?.data.first }

    /// The local name, and whether it is the complete one (type 0x09) or shortened (0x08).
    /// Bytes that are not valid UTF-8 are replaced, never trapped on.
    public var localName: (name: String, complete: Bool)? {
        if let full = first(.completeLocalName) { return (String(decoding: full.data, as: UTF8.self), true) }
        if let short = first(.shortenedLocalName) { return (String(decoding: short.data, as: UTF8.self), false) }
        return nil
    }

    /// The advertised transmit power level in dBm (AD type 0x0A).
    public var txPowerLevel: Int8? { first(.txPowerLevel)?.data.first.map { Int8(bitPattern: $0) } }

    /// Manufacturer specific data: the company identifier and the bytes after it.
    /// Structures too short to hold a company identifier are left out.
    public var manufacturerData: [(company: CompanyIdentifier, data: [UInt8])] {
        all(.manufacturerSpecificData).compactMap { structure in
            structure.companyIdentifier.map { ($0, Array(structure.data.dropFirst(2))) }
        }
    }

    /// Service data for 16-bit service UUIDs: the UUID and the bytes after it.
    public var serviceData16: [(uuid: UInt16, data: [UInt8])] {
        all(.serviceData16).compactMap { structure in
            structure.serviceUUID16.map { ($0, Array(structure.data.dropFirst(2))) }
        }
    }

    /// 16-bit service UUIDs from complete and incomplete lists, in order.
    public var serviceUUIDs16: [UInt16] {
        structures.filter { $0.type == .completeServiceUUIDs16 || $0.type == .incompleteServiceUUIDs16 }
            .flatMap { structure in
                stride(from: 0, to: structure.data.count - 1, by: 2).map {
                    UInt16(structure.data[$0]) | UInt16(structure.data[$0 + 1]) << 8
                }
            }
    }

    /// 128-bit service UUIDs from complete and incomplete lists. On the air they are
    /// little-endian; these are in the usual big-endian reading.
    public var serviceUUIDs128: [BeaconUUID] {
        structures.filter { $0.type == .completeServiceUUIDs128 || $0.type == .incompleteServiceUUIDs128 }
            .flatMap { structure in
                stride(from: 0, to: structure.data.count - 15, by: 16).compactMap {
                    BeaconUUID(bytes: structure.data[$0..<($0 + 16)].reversed())
                }
            }
    }
}
