/// Eddystone frames: service data for the 16-bit UUID 0xFEAA, first byte the frame type
/// (Eddystone protocol specification, github.com/google/eddystone).
public enum EddystoneFrame: Sendable, Hashable {
    case uid(EddystoneUID)
    case url(EddystoneURL)
    case tlm(EddystoneTLM)
    case encryptedTLM(EddystoneEncryptedTLM)
    case eid(EddystoneEID)

    /// The 16-bit service UUID Eddystone frames are carried under.
    public static let serviceUUID: UInt16 = 0xFEAA

    /// Decodes service data after the 0xFEAA UUID, from the frame type on. Offsets count from
    /// the frame type byte.
    public init(serviceData data: [UInt8]) throws(FrameError) {
        var reader = ByteReader(data)
        let frameType = try reader.uint8("Eddystone frame type")
        switch frameType {
        case 0x00: self = .uid(try EddystoneUID(reader: &reader))
        case 0x10: self = .url(try EddystoneURL(reader: &reader))
        case 0x20:
            let version = try reader.uint8("Eddystone-TLM version")
            switch version {
            case 0x00: self = .tlm(try EddystoneTLM(reader: &reader))
            case 0x01: self = .encryptedTLM(try EddystoneEncryptedTLM(reader: &reader))
            default:
                throw .unexpectedValue(what: "Eddystone-TLM version", offset: 1, expected: "0x00 (plain) or 0x01 (encrypted)", found: "0x" + hexByte(version))
            }
        case 0x30: self = .eid(try EddystoneEID(reader: &reader))
        default:
            throw .unexpectedValue(what: "Eddystone frame type", offset: 0, expected: "0x00 UID, 0x10 URL, 0x20 TLM or 0x30 EID", found: "0x" + hexByte(frameType))
        }
    }

    /// Finds and decodes the first Eddystone service data in advertising data.
    public init(advertisingData: AdvertisingData) throws(FrameError) {
        var nearestMiss: FrameError?
        for structure in advertisingData.all(.serviceData16) where structure.serviceUUID16 == Self.serviceUUID {
            do {
                try self.init(serviceData: Array(structure.data.dropFirst(2)))
                return
            } catch {
                if nearestMiss == nil { nearestMiss = error.shifted(by: structure.offset + 4) }
            }
        }
        throw nearestMiss ?? .notFound(what: "Eddystone service data (UUID 0xFEAA)")
    }
}

/// Eddystone-UID: a 10-byte namespace and a 6-byte instance, with the calibrated TX power at 0 m.
public struct EddystoneUID: Sendable, Hashable {
    /// Calibrated power at 0 m in dBm. The RSSI at 1 m is about 41 dB lower.
    public var txPower: Int8
    /// Namespace (10 bytes) and instance (6 bytes), in that order, as one 16-byte value.
    public var id: BeaconUUID

    /// Nil unless the namespace has 10 bytes and the instance 6.
    public init?(txPower: Int8, namespace: [UInt8], instance: [UInt8]) {
        guard namespace.count == 10, instance.count == 6, let id = BeaconUUID(bytes: namespace + instance) else { return nil }
        self.txPower = txPower
        self.id = id
    }

    init(reader: inout ByteReader) throws(FrameError) {
        txPower = try reader.int8("Eddystone-UID TX power")
        let body = try reader.read(16, "Eddystone-UID namespace and instance")
        id = BeaconUUID(bytes: body)!
        // Two RFU bytes follow in the specification; many beacons leave them out.
        guard reader.remaining == 0 || reader.remaining == 2 else {
            throw .wrongLength(what: "Eddystone-UID frame", offset: 0, expected: "18 or 20 bytes", found: reader.bytes.count)
        }
    }

    public var namespace: [UInt8] { Array(id.bytes.prefix(10)) }
    public var instance: [UInt8] { Array(id.bytes.suffix(6)) }
    /// dB between Eddystone's calibrated power at 0 m and the RSSI at 1 m (the measured power),
    /// the conversion Google's and the AltBeacon libraries use: `measuredPower = txPower − 41`.
    public static let oneMetreLoss = 41

    /// RSSI expected at 1 m: the 0 m power less ``oneMetreLoss``.
    public var measuredPower: Int { Int(txPower) - Self.oneMetreLoss }
    public var identity: BeaconIdentity { .eddystone(id) }
}

/// Eddystone-URL: a compressed URL and the calibrated TX power at 0 m.
public struct EddystoneURL: Sendable, Hashable {
    public var txPower: Int8
    public var url: String

    init(reader: inout ByteReader) throws(FrameError) {
        txPower = try reader.int8("Eddystone-URL TX power")
        let field = reader.rest()
        guard !field.isEmpty else {
            throw .truncated(what: "Eddystone-URL scheme", offset: 2, needed: 1, available: 0)
        }
        url = try EddystoneURL.decode(field)
    }

    public static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    public static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                                    ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    /// Decodes a URL field: scheme prefix byte, then characters and expansion codes 0x00–0x0D.
    public static func decode(_ field: [UInt8]) throws(FrameError) -> String {
        guard let scheme = field.first else { throw .empty(what: "Eddystone-URL field") }
        guard Int(scheme) < schemes.count else {
            throw .unexpectedValue(what: "Eddystone-URL scheme prefix", offset: 0, expected: "0x00-0x03", found: "0x" + hexByte(scheme))
        }
        var url = schemes[Int(scheme)]
        for (offset, byte) in field.enumerated().dropFirst() {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if byte > 0x20 && byte < 0x7F {
                url.append(Character(Unicode.Scalar(byte)))
            } else {
                throw .unexpectedValue(what: "Eddystone-URL character", offset: offset, expected: "a printable ASCII character or an expansion code 0x00-0x0D", found: "0x" + hexByte(byte))
            }
        }
        return url
    }

    /// Encodes a URL field as the AltBeacon library does: scheme and host lower-cased, the path
    /// kept, the longest expansion taken at each position. Nil when the scheme is not http(s).
    public static func encode(_ url: String) -> [UInt8]? {
        let lower = url.lowercased()
        // "http://www." before "http://": the longer prefix wins.
        guard let scheme = [1, 0, 3, 2].first(where: { lower.hasPrefix(schemes[$0]) }) else { return nil }
        let rest = url.dropFirst(schemes[scheme].count)
        // Host ends at the first '/'; it is lower-cased, the path is not.
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let text = Array(rest[..<hostEnd].lowercased() + rest[hostEnd...])
        var out: [UInt8] = [UInt8(scheme)]
        var i = 0
        outer: while i < text.count {
            for (code, expansion) in expansions.enumerated() {
                let e = Array(expansion)
                if i + e.count <= text.count, Array(text[i..<(i + e.count)]) == e {
                    out.append(UInt8(code))
                    i += e.count
                    continue outer
                }
            }
            out.append(contentsOf: Array(String(text[i]).utf8))
            i += 1
        }
        return out
    }
}

/// Eddystone-TLM, plain (version 0): battery voltage, temperature, advertising and uptime counters.
public struct EddystoneTLM: Sendable, Hashable {
    /// Battery voltage in mV; 0 when not battery powered.
    public var batteryMillivolts: UInt16
    /// Temperature as the signed 8.8 fixed-point word; 0x8000 means not supported.
    public var temperatureRaw: Int16
    public var advertisingCount: UInt32
    /// Time since power-on in units of 0.1 s (the field as sent).
    public var uptimeTenths: UInt32

    public init(batteryMillivolts: UInt16, temperatureRaw: Int16, advertisingCount: UInt32, uptimeTenths: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureRaw = temperatureRaw
        self.advertisingCount = advertisingCount
        self.uptimeTenths = uptimeTenths
    }

    init(reader: inout ByteReader) throws(FrameError) {
        batteryMillivolts = try reader.uint16BE("Eddystone-TLM battery voltage")
        temperatureRaw = Int16(bitPattern: try reader.uint16BE("Eddystone-TLM temperature"))
        advertisingCount = try reader.uint32BE("Eddystone-TLM advertising count")
        uptimeTenths = try reader.uint32BE("Eddystone-TLM uptime")
        guard reader.isAtEnd else {
            throw .wrongLength(what: "Eddystone-TLM frame", offset: 0, expected: "14 bytes", found: reader.bytes.count)
        }
    }

    /// Degrees Celsius, nil when the beacon reports 0x8000 (not supported).
    public var temperatureCelsius: Double? {
        temperatureRaw == Int16.min ? nil : Double(temperatureRaw) / 256
    }

    /// The frame from the frame type on: `20 00 …`, 14 bytes.
    public var frame: [UInt8] {
        func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] { (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        return [0x20, 0x00] + be(batteryMillivolts) + be(UInt16(bitPattern: temperatureRaw)) + be(advertisingCount) + be(uptimeTenths)
    }
}

/// Eddystone-TLM, encrypted (version 1): 12 bytes of encrypted TLM, a salt and a MIC.
public struct EddystoneEncryptedTLM: Sendable, Hashable {
    public var encryptedData: [UInt8]
    public var salt: UInt16
    public var messageIntegrityCheck: UInt16

    init(reader: inout ByteReader) throws(FrameError) {
        encryptedData = try reader.read(12, "Eddystone-eTLM encrypted data")
        salt = try reader.uint16BE("Eddystone-eTLM salt")
        messageIntegrityCheck = try reader.uint16BE("Eddystone-eTLM message integrity check")
    }
}

/// Eddystone-EID: an 8-byte rotating ephemeral identifier.
public struct EddystoneEID: Sendable, Hashable {
    public var txPower: Int8
    public var ephemeralIdentifier: [UInt8]

    init(reader: inout ByteReader) throws(FrameError) {
        txPower = try reader.int8("Eddystone-EID TX power")
        ephemeralIdentifier = try reader.read(8, "Eddystone-EID ephemeral identifier")
    }
}
