import BeaconFrames
import Foundation
import Testing

/// Every vector of ../shared/data/frame-vectors.json, decoded by Nearplay.
///
/// Each vector's decoding must agree with its `derived` fields (the Core-spec reading of the
/// bytes) on every key we produce, and with its `expect` fields, except where a vector is listed
/// in `Exceptions` below with the reason we read the bytes differently from the source library.
@Suite struct FrameVectorTests {
    struct Vector: @unchecked Sendable, CustomTestStringConvertible {
        let object: [String: Any]
        var id: String { object["id"] as! String }
        var kind: String { object["input_kind"] as! String }
        var hex: String { object["hex"] as! String }
        var expect: [String: Any] { object["expect"] as? [String: Any] ?? [:] }
        var derived: [String: Any] { object["derived"] as? [String: Any] ?? [:] }
        var context: [String: Any] { object["context"] as? [String: Any] ?? [:] }
        var isMalformed: Bool { object["malformed"] != nil }
        var testDescription: String { id }
    }

    static let vectors: [Vector] = {
        guard let array = try? SharedData.json("frame-vectors.json") as? [[String: Any]] else { return [] }
        return array.map(Vector.init)
    }()

    @Test func allVectorsAreThere() {
        #expect(Self.vectors.count == 119, "expected the 119 vectors of shared/data/frame-vectors.json")
    }

    /// Formats this project decodes. Vectors of other formats must not be taken for one of these.
    static let supportedFormats: Set<String> = [
        "ibeacon", "altbeacon", "eddystone_uid", "eddystone_url", "eddystone_tlm", "eddystone_tlm_encrypted",
        "eddystone_eid", "exposure_notification",
    ]

    /// Keys in `expect` that describe a library's own conventions rather than the frame's bytes:
    /// sensor readings some libraries hide in the minor, distance estimates, name heuristics, OUI
    /// look-ups, and AltBeacon's layout-specific outputs.
    static let libraryKeys: Set<String> = [
        "cypress_temperature_c_x100_truncated", "cypress_humidity_pct_x100_truncated", "cypress_humidity",
        "cypress_temperature", "library_distance_m_rounded", "library_distance_m_rounded_after_rssi_-70", "transient",
        "vendor", "reencoded_hex", "data_fields", "data_field_count", "no_crash", "name_complete", "temperature_raw",
        "url_field_length", "id1_length",
    ]

    /// Vectors whose `expect` we deliberately do not reproduce, and why. For these the test checks
    /// our own reading (`derived`, or a rejection) instead.
    static let exceptions: [String: String] = [
        "beacontools-10": "the encrypted-TLM salt and MIC lie past the service-data AD length; a length-respecting parser finds a truncated eTLM frame",
        "altbeacon-5": "AltBeacon frame without the manufacturer-reserved byte: decoded, with the reserved byte absent rather than a data field 0",
        "altbeacon-10": "the TLM service data claims 21 bytes but 17 remain: the structure is truncated, so there is no TLM frame",
        "altbeacon-24": "TLM version byte 0x01 is encrypted TLM in the Eddystone specification; AltBeacon's layout ignores it",
        "ibeacon-ble-5": "policy: ibeacon-ble drops Tilt hydrometer UUIDs; Nearplay decodes every valid iBeacon",
        "altbeacon-3": "the test configures beacon type code 0xAABB; the AltBeacon specification's code is BE AC, so it is not an AltBeacon",
        "bleson-4": "only 'no crash' is asserted; the event has no RSSI byte, so Nearplay rejects it with a typed reason",
    ]

    @Test(arguments: vectors)
    func vectorDecodesAsSpecifiedOrAsDocumented(_ vector: Vector) throws {
        let ours = try Self.decode(vector)
        let expect = vector.expect
        let format = ours["format"] as? String

        // 1. Our reading agrees with the spec reading on every key both have.
        for (key, value) in vector.derived where !["ad_problems", "note", "tlm_fields_hex", "url_field_hex", "format"].contains(key) {
            guard let mine = ours[key] else { continue }
            #expect(Self.same(mine, value), "\(vector.id): \(key) is \(mine), derived says \(value)")
        }
        // (Malformed HCI vectors' `derived` reads the bytes by position, as their source does; we reject them.)
        if !vector.isMalformed, let derivedFormat = vector.derived["format"] as? String, Self.supportedFormats.contains(derivedFormat) {
            #expect(format == derivedFormat, "\(vector.id): derived format \(derivedFormat), we found \(format ?? "none")")
        }

        // 2. Rejections.
        if expect["reject"] as? Bool == true {
            switch expect["reject_kind"] as? String {
            case "malformed":
                #expect(format == nil, "\(vector.id) is malformed but we decoded \(format ?? "")")
                #expect(!(ours["problems"] as? [String] ?? []).isEmpty, "\(vector.id): a malformed input must come with a reason")
            case "not_a_beacon":
                #expect(format == nil, "\(vector.id) is not a beacon but we decoded \(format ?? "")")
            case "filtered", "layout_mismatch", "policy":
                // Valid frames a filter or custom layout rejects: our standard decoder reads them as `derived` (step 1).
                #expect(vector.derived["format"] == nil || format != nil, "\(vector.id): a valid frame must decode")
            default:
                Issue.record("\(vector.id): unknown reject kind")
            }
            return
        }

        // 3. Positive expectations.
        let expectedFormat = expect["format"] as? String
        if let expectedFormat, !Self.supportedFormats.contains(expectedFormat) {
            // Estimote, CJ Monitor, UriBeacon, custom AltBeacon layouts: not formats Nearplay reads.
            if let theirs = vector.derived["format"] as? String, Self.supportedFormats.contains(theirs) {
                #expect(format == theirs)
            } else {
                #expect(format == nil, "\(vector.id): \(expectedFormat) must not be taken for \(format ?? "")")
            }
            return
        }
        if let reason = Self.exceptions[vector.id] {
            // Documented difference: the checks of step 1 hold; say what we do instead.
            #expect(!reason.isEmpty)
            if vector.id == "altbeacon-5" { #expect(format == "altbeacon" && ours["mfg_reserved"] == nil) }
            if vector.id == "ibeacon-ble-5" { #expect(format == "ibeacon") }
            if vector.id == "altbeacon-3" { #expect(format == nil) }
            if ["beacontools-10", "altbeacon-10", "altbeacon-24", "bleson-4"].contains(vector.id) {
                #expect(format == nil && !(ours["problems"] as? [String] ?? []).isEmpty)
            }
            return
        }
        if vector.isMalformed, !Self.matches(ours, expect) {
            // The source's own bytes break the length framing (wrong H4 byte, lengths); rejecting
            // them is right. Our reading must then be the spec reading, with a reason.
            #expect(!(ours["problems"] as? [String] ?? []).isEmpty, "\(vector.id): malformed input needs a reason")
            return
        }
        for (key, value) in expect where key != "format" && !Self.libraryKeys.contains(key) {
            #expect(ours[key] != nil, "\(vector.id): we produce no \(key)")
            if let mine = ours[key] { #expect(Self.same(mine, value), "\(vector.id): \(key) is \(mine), expected \(value)") }
        }
        if let expectedFormat { #expect(format == expectedFormat, "\(vector.id): expected \(expectedFormat), got \(format ?? "none")") }
    }

    static func matches(_ ours: [String: Any], _ expect: [String: Any]) -> Bool {
        expect.allSatisfy { key, value in libraryKeys.contains(key) || ours[key].map { same($0, value) } ?? false }
    }

    // MARK: decoding a vector into the vocabulary of the data file

    static func decode(_ vector: Vector) throws -> [String: Any] {
        let bytes = try Hex.decode(vector.hex)
        var out: [String: Any] = [:]
        var problems: [String] = []
        switch vector.kind {
        case "ad", "scan_record":
            describeAD(bytes, into: &out, problems: &problems)
            if let rssi = vector.context["rssi"] { out["rssi"] = rssi }
        case "hci_event":
            let framing: HCIEvent.Framing = (vector.object["h4"] as? Bool) == true ? .h4 : .eventCode
            do {
                let reports = try HCIEvent.advertisingReports(bytes, framing: framing)
                let report = reports[0]
                out["address"] = report.address.description
                out["address_type"] = report.addressType?.rawValue
                out["event_type"] = report.legacyEventName
                out["rssi"] = report.rssi
                out["ad_hex"] = Hex.encode(report.data)
                describeAD(report.data, into: &out, problems: &problems)
            } catch {
                problems.append("\(error)")
            }
        case "manufacturer_data":
            let company = CompanyIdentifier(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
            out["manufacturer_data"] = [vector.hex]
            do {
                describe(.iBeacon(try IBeacon(company: company, manufacturerData: Array(bytes.dropFirst(2)))), into: &out)
            } catch {
                problems.append("\(error)")
            }
            if let rssi = vector.context["rssi"] { out["rssi"] = rssi }
        case "eddystone_url_field":
            do { out["url"] = try EddystoneURL.decode(bytes) } catch { problems.append("\(error)") }
            if let source = vector.expect["encoded_from"] as? String {
                out["encoded_from"] = EddystoneURL.encode(source) == bytes ? source : "(encodes to \(EddystoneURL.encode(source).map(Hex.encode) ?? "nothing"))"
            }
        case "eddystone_frame":
            do { describe(.eddystone(try EddystoneFrame(serviceData: bytes)), into: &out) } catch { problems.append("\(error)") }
        case "uuid_bytes":
            out["uuid"] = BeaconUUID(bytes: bytes)?.description
        case "bdaddr_le":
            out["address"] = BluetoothAddress(littleEndian: bytes.prefix(6))?.description
            out["remaining_hex"] = Hex.encode(bytes.dropFirst(6))
        default:
            Issue.record("unknown input kind \(vector.kind)")
        }
        out["problems"] = problems
        return out
    }

    static func describeAD(_ bytes: [UInt8], into out: inout [String: Any], problems: inout [String]) {
        let ad = AdvertisingData(parsing: bytes)
        problems += ad.problems.map(\.description)
        if bytes.isEmpty { problems.append("empty") }
        if let flags = ad.flags { out["flags"] = Int(flags) }
        if let name = ad.localName {
            out["name"] = name.name
            out["name_complete"] = name.complete
        }
        let uuids16 = ad.serviceUUIDs16
        if !uuids16.isEmpty { out["uuid16"] = uuids16.map { String(format: "%04X", $0) } }
        let uuids128 = ad.serviceUUIDs128
        if !uuids128.isEmpty { out["uuid128"] = uuids128.map(\.description) }
        let serviceData = ad.all(.serviceData16).map { Hex.encode($0.data) }
        if !serviceData.isEmpty { out["service_data"] = serviceData.count == 1 ? serviceData[0] : serviceData }
        let manufacturer = ad.all(.manufacturerSpecificData).map { Hex.encode($0.data) }
        if !manufacturer.isEmpty { out["manufacturer_data"] = manufacturer }
        out["ad_structure_count"] = ad.structures.count
        out["ad_structure_types"] = ad.structures.map { Int($0.type.rawValue) }
        let (frames, misses) = BeaconFrame.decodeAll(ad)
        problems += misses.map(\.description)
        if let frame = frames.first { describe(frame, into: &out) }
    }

    static func describe(_ frame: BeaconFrame, into out: inout [String: Any]) {
        switch frame {
        case let .iBeacon(f):
            out["format"] = "ibeacon"
            out["uuid"] = f.uuid.description
            out["major"] = Int(f.major)
            out["minor"] = Int(f.minor)
            out["measured_power"] = Int(f.measuredPower)
        case let .altBeacon(f):
            out["format"] = "altbeacon"
            out["manufacturer"] = Int(f.manufacturer.rawValue)
            out["id1"] = f.id1.description
            out["id2"] = Int(f.id2)
            out["id3"] = Int(f.id3)
            out["measured_power"] = Int(f.measuredPower)
            if let reserved = f.manufacturerReserved { out["mfg_reserved"] = Int(reserved) }
        case let .eddystone(.uid(f)):
            out["format"] = "eddystone_uid"
            out["namespace"] = Hex.encode(f.namespace)
            out["instance"] = Hex.encode(f.instance)
            out["tx_power"] = Int(f.txPower)
        case let .eddystone(.url(f)):
            out["format"] = "eddystone_url"
            out["url"] = f.url
            out["tx_power"] = Int(f.txPower)
        case let .eddystone(.tlm(f)):
            out["format"] = "eddystone_tlm"
            out["version"] = 0
            out["battery_mv"] = Int(f.batteryMillivolts)
            out["temperature_c"] = f.temperatureCelsius
            out["adv_count"] = Int(f.advertisingCount)
            out["sec_count"] = Int(f.uptimeTenths)
        case let .eddystone(.encryptedTLM(f)):
            out["format"] = "eddystone_tlm_encrypted"
            out["encrypted_data"] = Hex.encode(f.encryptedData)
            out["salt"] = Int(f.salt)
            out["mic"] = Int(f.messageIntegrityCheck)
        case let .eddystone(.eid(f)):
            out["format"] = "eddystone_eid"
            out["tx_power"] = Int(f.txPower)
            out["eid"] = Hex.encode(f.ephemeralIdentifier)
        case let .exposureNotification(f):
            out["format"] = "exposure_notification"
            out["rpi"] = Hex.encode(f.rollingProximityIdentifier)
            out["aem"] = Hex.encode(f.associatedEncryptedMetadata)
        }
    }

    /// Compares a decoded value with a JSON value: numbers by value (with `approx`/`tol`), hex and
    /// UUID strings case-insensitively, lists element by element.
    static func same(_ mine: Any, _ theirs: Any) -> Bool {
        if let spec = theirs as? [String: Any], let approx = spec["approx"] as? Double, let tol = spec["tol"] as? Double {
            return (mine as? Double).map { abs($0 - approx) <= tol } ?? (mine as? Int).map { abs(Double($0) - approx) <= tol } ?? false
        }
        if let a = mine as? [Any], let b = theirs as? [Any] {
            return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        }
        if let a = mine as? String, let b = theirs as? [Any], b.count == 1 { return same(a, b[0]) }
        if let a = mine as? String, let b = theirs as? String { return a.lowercased() == b.lowercased() }
        if let a = mine as? Bool, let b = theirs as? Bool { return a == b }
        let a = (mine as? Int).map(Double.init) ?? mine as? Double
        let b = (theirs as? NSNumber)?.doubleValue
        if let a, let b { return abs(a - b) < 1e-9 }
        return false
    }
}
