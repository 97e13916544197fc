/// An AltBeacon frame (AltBeacon specification v1.0): manufacturer data of any company, beacon
/// code `BE AC`, a 20-byte beacon identifier (read here as ID1 16 bytes, ID2 and ID3 2 bytes
/// each, big-endian), the reference RSSI at 1 m and one manufacturer-reserved byte.
public struct AltBeacon: Sendable, Hashable {
    public var manufacturer: CompanyIdentifier
    public var id1: BeaconUUID
    public var id2: UInt16
    public var id3: UInt16
    /// Reference RSSI at 1 m in dBm.
    public var measuredPower: Int8
    /// The manufacturer-reserved byte; nil when the frame leaves it out (AD length 0x1A instead
    /// of 0x1B). The AltBeacon library accepts such frames; so does this decoder.
    public var manufacturerReserved: UInt8?

    public static let beaconCode: [UInt8] = [0xBE, 0xAC]

    public init(manufacturer: CompanyIdentifier, id1: BeaconUUID, id2: UInt16, id3: UInt16,
                measuredPower: Int8, manufacturerReserved: UInt8? = 0) {
        self.manufacturer = manufacturer
        self.id1 = id1
        self.id2 = id2
        self.id3 = id3
        self.measuredPower = measuredPower
        self.manufacturerReserved = manufacturerReserved
    }

    /// Decodes the manufacturer data after the company identifier. Offsets count from its first byte.
    public init(company: CompanyIdentifier, manufacturerData data: [UInt8]) throws(FrameError) {
        guard data.count >= 2 else {
            throw .truncated(what: "AltBeacon beacon code", offset: 0, needed: 2, available: data.count)
        }
        guard data[0] == 0xBE, data[1] == 0xAC else {
            throw .unexpectedValue(what: "AltBeacon beacon code", offset: 0, expected: "BE AC", found: hexByte(data[0]) + " " + hexByte(data[1]))
        }
        guard data.count >= 23 else {
            throw .truncated(what: "AltBeacon frame", offset: 2, needed: 21, available: data.count - 2)
        }
        guard data.count <= 24 else {
            throw .wrongLength(what: "AltBeacon manufacturer data", offset: 0, expected: "24 bytes after the company identifier", found: data.count)
        }
        self.init(
            manufacturer: company,
            id1: BeaconUUID(bytes: data[2..<18])!,
            id2: UInt16(data[18]) << 8 | UInt16(data[19]),
            id3: UInt16(data[20]) << 8 | UInt16(data[21]),
            measuredPower: Int8(bitPattern: data[22]),
            manufacturerReserved: data.count == 24 ? data[23] : nil
        )
    }

    public init(advertisingData: AdvertisingData) throws(FrameError) {
        var nearestMiss: FrameError?
        for structure in advertisingData.all(.manufacturerSpecificData) {
            guard let company = structure.companyIdentifier else { continue }
            do {
                try self.init(company: company, manufacturerData: Array(structure.data.dropFirst(2)))
                return
            } catch {
                if nearestMiss == nil { nearestMiss = error.shifted(by: structure.offset + 4) }
            }
        }
        throw nearestMiss ?? .notFound(what: "manufacturer specific data with AltBeacon code BE AC")
    }

    public var identity: BeaconIdentity { .altBeacon(id1: id1, id2: id2, id3: id3) }
}
