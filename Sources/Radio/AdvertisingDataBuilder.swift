/// Rebuilds AD structures (Core Specification Supplement, Part A) from the decoded fields BlueZ
/// hands out, so BlueZ sightings decode exactly like raw HCI or recorded ones.
enum AdvertisingDataBuilder {
    static let flagsType: UInt8 = 0x01
    static let serviceData16Type: UInt8 = 0x16
    static let serviceData32Type: UInt8 = 0x20
    static let serviceData128Type: UInt8 = 0x21
    static let manufacturerSpecificType: UInt8 = 0xFF

    /// Flags first, then manufacturer data by company identifier, service data by UUID, then any
    /// other AD types BlueZ reported. Fields too long for one AD structure (254 bytes of payload)
    /// are left out: they cannot have come from one.
    static func build(flags: [UInt8] = [], manufacturerData: [UInt16: [UInt8]],
                      serviceData: [String: [UInt8]], otherData: [UInt8: [UInt8]] = [:]) -> [UInt8] {
        var data: [UInt8] = []
        func append(_ type: UInt8, _ payload: [UInt8]) {
            guard payload.count <= 254 else { return }
            data.append(UInt8(payload.count + 1))
            data.append(type)
            data += payload
        }
        if !flags.isEmpty { append(flagsType, flags) }
        for (company, bytes) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            append(manufacturerSpecificType, [UInt8(company & 0xFF), UInt8(company >> 8)] + bytes)
        }
        for (uuid, bytes) in serviceData.sorted(by: { $0.key < $1.key }) {
            guard let (type, uuidBytes) = serviceDataUUID(uuid) else { continue }
            append(type, uuidBytes + bytes)
        }
        for (type, bytes) in otherData.sorted(by: { $0.key < $1.key })
        where type != flagsType && type != manufacturerSpecificType
            && type != serviceData16Type && type != serviceData32Type && type != serviceData128Type
        {
            append(type, bytes)
        }
        return data
    }

    /// The AD type and little-endian UUID bytes for a service-data UUID as BlueZ writes it
    /// (always the 128-bit form). UUIDs on the Bluetooth base UUID shrink to 16 or 32 bits, as
    /// they were sent.
    static func serviceDataUUID(_ text: String) -> (UInt8, [UInt8])? {
        let hex = text.filter { $0 != "-" }
        guard hex.count == 32 else { return nil }
        var bigEndian: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bigEndian.append(byte)
            index = next
        }
        let baseSuffix: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
        if Array(bigEndian[4...]) == baseSuffix {
            if bigEndian[0] == 0, bigEndian[1] == 0 {
                return (serviceData16Type, [bigEndian[3], bigEndian[2]])
            }
            return (serviceData32Type, Array(bigEndian[0..<4].reversed()))
        }
        return (serviceData128Type, bigEndian.reversed())
    }
}
