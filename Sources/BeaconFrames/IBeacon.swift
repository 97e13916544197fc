/// An iBeacon frame: Apple manufacturer data `02 15`, a 16-byte proximity UUID, major and minor
/// (big-endian) and the measured power, the RSSI expected at 1 m (int8, dBm).
///
/// As an AD structure: `1A FF 4C 00 02 15 <UUID> <major> <minor> <power>` (26 bytes after the
/// length byte). Apple's "Proximity Beacon Specification" R1.
public struct IBeacon: Sendable, Hashable {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// RSSI at 1 m in dBm, as calibrated by the transmitter. 0 means not calibrated.
    public var measuredPower: Int8

    /// The iBeacon type and length bytes that follow Apple's company identifier.
    public static let prefix: [UInt8] = [0x02, 0x15]
    /// Manufacturer data after the company identifier: prefix + UUID + major + minor + power.
    public static let manufacturerDataLength = 23

    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Decodes manufacturer data, given the company identifier and the bytes after it (as BlueZ's
    /// `ManufacturerData` dictionary hands them over). Offsets in errors count from the first
    /// byte after the company identifier.
    public init(company: CompanyIdentifier, manufacturerData data: [UInt8]) throws(FrameError) {
        guard company == .apple else {
            throw .unexpectedValue(what: "company identifier", offset: -2, expected: CompanyIdentifier.apple.description, found: company.description)
        }
        guard data.count >= 2 else {
            throw .truncated(what: "iBeacon type and length", offset: 0, needed: 2, available: data.count)
        }
        guard data[0] == 0x02 else {
            throw .unexpectedValue(what: "Apple data type", offset: 0, expected: "0x02 (iBeacon)", found: "0x" + hexByte(data[0]))
        }
        guard data[1] == 0x15 else {
            throw .wrongLength(what: "iBeacon length byte", offset: 1, expected: "0x15 (21)", found: Int(data[1]))
        }
        guard data.count >= Self.manufacturerDataLength else {
            throw .truncated(what: "iBeacon frame", offset: 2, needed: 21, available: data.count - 2)
        }
        guard data.count == Self.manufacturerDataLength else {
            throw .wrongLength(what: "iBeacon manufacturer data", offset: 0, expected: "23 bytes after the company identifier", found: data.count)
        }
        // Bounds are checked above: 23 bytes exactly.
        self.init(
            uuid: BeaconUUID(bytes: data[2..<18])!,
            major: UInt16(data[18]) << 8 | UInt16(data[19]),
            minor: UInt16(data[20]) << 8 | UInt16(data[21]),
            measuredPower: Int8(bitPattern: data[22])
        )
    }

    /// Finds and decodes the iBeacon structure in advertising data. When there is none, the
    /// error explains the nearest miss (Apple data of another type, a wrong length, …).
    public init(advertisingData: AdvertisingData) throws(FrameError) {
        var nearestMiss: FrameError?
        for structure in advertisingData.all(.manufacturerSpecificData) {
            guard let company = structure.companyIdentifier else {
                nearestMiss = nearestMiss ?? .truncated(what: "company identifier", offset: structure.offset + 2, needed: 2, available: structure.data.count)
                continue
            }
            do {
                try self.init(company: company, manufacturerData: Array(structure.data.dropFirst(2)))
                return
            } catch {
                let located = error.shifted(by: structure.offset + 4)
                // An Apple structure is a nearer miss than another company's.
                if company == .apple || nearestMiss == nil { nearestMiss = located }
            }
        }
        throw nearestMiss ?? advertisingData.problems.first ?? .notFound(what: "manufacturer specific data (an iBeacon is Apple manufacturer data 02 15 …)")
    }

    /// Manufacturer data after the company identifier (23 bytes), as BlueZ's
    /// `LEAdvertisement1.ManufacturerData` takes it under key 0x004C.
    public var manufacturerData: [UInt8] {
        Self.prefix + uuid.bytes
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: measuredPower)]
    }

    /// The complete AD structure: `1A FF 4C 00 02 15 …`.
    public var adStructure: ADStructure {
        ADStructure(type: .manufacturerSpecificData, data: [0x4C, 0x00] + manufacturerData)
    }

    /// Advertising data as a beacon sends it: Flags (LE General Discoverable, BR/EDR not
    /// supported) when `includeFlags`, then the iBeacon structure. 30 or 27 bytes.
    public func advertisingData(includeFlags: Bool = true) -> [UInt8] {
        (includeFlags ? [0x02, 0x01, 0x06] : []) + adStructure.bytes
    }

    public var identity: BeaconIdentity { .iBeacon(uuid: uuid, major: major, minor: minor) }
}
