/// An advertising report from an HCI LE Meta event: LE Advertising Report (subevent 0x02) or
/// LE Extended Advertising Report (subevent 0x0D). Core Specification Vol 4, Part E, §7.7.65.2
/// and §7.7.65.13.
public struct HCIAdvertisingReport: Sendable, Hashable {
    /// Legacy: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    /// Extended: the 16-bit event-type bit field (bit 3 scan response, bit 4 legacy, bits 5–6
    /// data status).
    public var eventType: UInt16
    public var isExtended: Bool
    /// The Core address-type code (0 public, 1 random, 2/3 resolved identities, 0xFF anonymous).
    public var addressTypeCode: UInt8
    public var address: BluetoothAddress
    /// dBm; nil when the controller reported 127 (not available).
    public var rssi: Int?
    /// Extended reports only: the advertiser's TX power in dBm, nil when 127 (not available).
    public var txPower: Int?
    /// Extended reports only: the advertising set identifier.
    public var advertisingSID: UInt8?
    /// The advertising data (AD structures as on air).
    public var data: [UInt8]

    public var addressType: AddressType? { AddressType(coreCode: addressTypeCode) }

    /// True for legacy scan responses and extended reports with the scan-response bit.
    public var isScanResponse: Bool { isExtended ? eventType & 0x08 != 0 : eventType == 4 }

    /// Extended reports: 0 complete, 1 incomplete (more to come), 2 incomplete (truncated).
    public var dataStatus: UInt8 { isExtended ? UInt8((eventType >> 5) & 0x03) : 0 }

    public var legacyEventName: String {
        guard !isExtended else { return "extended(0x\(hexByte(UInt8(eventType >> 8)))\(hexByte(UInt8(eventType & 0xFF))))" }
        switch eventType {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND"
        case 2: return "ADV_SCAN_IND"
        case 3: return "ADV_NONCONN_IND"
        case 4: return "SCAN_RSP"
        default: return "event type \(eventType)"
        }
    }
}

/// Decoding of HCI event packets that carry advertising reports.
public enum HCIEvent {
    /// The H4 (UART) packet-type byte of an HCI event.
    public static let h4EventPacketType: UInt8 = 0x04
    public static let leMetaEventCode: UInt8 = 0x3E
    public static let leAdvertisingReport: UInt8 = 0x02
    public static let leExtendedAdvertisingReport: UInt8 = 0x0D

    /// How the packet starts: with the H4 packet-type byte 0x04, or directly with the event code.
    public enum Framing: Sendable { case h4, eventCode, detect }

    /// Decodes the advertising reports of one LE Meta event packet. Every length field is checked
    /// against the bytes present; any disagreement throws with the byte offset into `bytes`.
    public static func advertisingReports(_ bytes: [UInt8], framing: Framing = .detect) throws(FrameError) -> [HCIAdvertisingReport] {
        var reports: [HCIAdvertisingReport] = []
        try advertisingReports(bytes, framing: framing, into: &reports)
        return reports
    }

    /// The same, appending to `reports` (which a caller on the per-report path reuses, so the
    /// reports of one event cost no allocation of their own). On a throw, nothing was appended.
    public static func advertisingReports(_ bytes: [UInt8], framing: Framing = .detect,
                                          into reports: inout [HCIAdvertisingReport]) throws(FrameError) {
        let countBefore = reports.count
        do {
            try forEachAdvertisingReport(bytes, framing: framing) { reports.append($0) }
        } catch {
            reports.removeSubrange(countBefore...)
            throw error
        }
    }

    /// The same checks, handing each report to `body` as soon as it is decoded: the per-report
    /// path, with no array of reports in between. When a later part of the event is malformed,
    /// the reports before it were handed over already; callers that must see all or nothing undo
    /// them (as ``advertisingReports(_:framing:into:)`` does).
    public static func forEachAdvertisingReport(_ bytes: [UInt8], framing: Framing = .detect,
                                                _ body: (HCIAdvertisingReport) -> Void) throws(FrameError) {
        guard !bytes.isEmpty else { throw .empty(what: "HCI event") }
        var start = 0
        switch framing {
        case .h4:
            guard bytes[0] == h4EventPacketType else {
                throw .unexpectedValue(what: "H4 packet type", offset: 0, expected: "0x04 (HCI event)", found: "0x" + hexByte(bytes[0]))
            }
            start = 1
        case .eventCode:
            break
        case .detect:
            if bytes[0] == h4EventPacketType { start = 1 }
            else if bytes[0] != leMetaEventCode {
                throw .unexpectedValue(what: "first byte", offset: 0, expected: "0x04 (H4 event) or 0x3E (LE Meta event code)", found: "0x" + hexByte(bytes[0]))
            }
        }
        var reader = ByteReader(bytes, startingAt: start)
        let code = try reader.uint8("HCI event code")
        guard code == leMetaEventCode else {
            throw .unexpectedValue(what: "HCI event code", offset: start, expected: "0x3E (LE Meta)", found: "0x" + hexByte(code))
        }
        let parameterLength = Int(try reader.uint8("HCI parameter total length"))
        guard parameterLength == reader.remaining else {
            if parameterLength > reader.remaining {
                throw .truncated(what: "HCI event parameters", offset: reader.absoluteOffset, needed: parameterLength, available: reader.remaining)
            }
            throw .wrongLength(what: "HCI parameter total length", offset: reader.absoluteOffset - 1, expected: "\(reader.remaining) (the bytes present)", found: parameterLength)
        }
        let subevent = try reader.uint8("LE Meta subevent code")
        switch subevent {
        case leAdvertisingReport: try legacyReports(&reader, body)
        case leExtendedAdvertisingReport: try extendedReports(&reader, body)
        default:
            throw .unexpectedValue(what: "LE Meta subevent", offset: reader.absoluteOffset - 1, expected: "0x02 (advertising report) or 0x0D (extended advertising report)", found: "0x" + hexByte(subevent))
        }
        guard reader.isAtEnd else {
            throw .wrongLength(what: "LE advertising report event", offset: reader.absoluteOffset, expected: "no bytes after the last report", found: reader.remaining)
        }
    }

    private static func rssiValue(_ raw: Int8) -> Int? { raw == 127 ? nil : Int(raw) }

    private static func legacyReports(_ reader: inout ByteReader, _ body: (HCIAdvertisingReport) -> Void) throws(FrameError) {
        let count = Int(try reader.uint8("number of reports"))
        guard (1...25).contains(count) else {
            throw .unexpectedValue(what: "number of reports", offset: reader.absoluteOffset - 1, expected: "1-25", found: "\(count)")
        }
        for _ in 0..<count {
            let eventType = try reader.uint8("advertising event type")
            let addressType = try reader.uint8("address type")
            let address = try reader.address("address")
            let lengthOffset = reader.absoluteOffset
            let length = Int(try reader.uint8("advertising data length"))
            guard length <= 31 else {
                throw .wrongLength(what: "legacy advertising data length", offset: lengthOffset, expected: "at most 31", found: length)
            }
            let data = try reader.read(length, "advertising data")
            let rssi = try reader.int8("RSSI")
            body(HCIAdvertisingReport(eventType: UInt16(eventType), isExtended: false, addressTypeCode: addressType,
                                                address: address, rssi: rssiValue(rssi), txPower: nil, advertisingSID: nil, data: data))
        }
    }

    private static func extendedReports(_ reader: inout ByteReader, _ body: (HCIAdvertisingReport) -> Void) throws(FrameError) {
        let count = Int(try reader.uint8("number of reports"))
        guard (1...10).contains(count) else {
            throw .unexpectedValue(what: "number of reports", offset: reader.absoluteOffset - 1, expected: "1-10", found: "\(count)")
        }
        for _ in 0..<count {
            let eventType = try reader.uint16LE("extended event type")
            let addressType = try reader.uint8("address type")
            let address = try reader.address("address")
            try reader.skip(2, "primary and secondary PHY")
            let sid = try reader.uint8("advertising SID")
            let txPower = try reader.int8("TX power")
            let rssi = try reader.int8("RSSI")
            try reader.skip(2 + 1 + 6, "periodic interval and direct address")
            let length = Int(try reader.uint8("advertising data length"))
            let data = try reader.read(length, "advertising data")
            body(HCIAdvertisingReport(eventType: eventType, isExtended: true, addressTypeCode: addressType,
                                                address: address, rssi: rssiValue(rssi), txPower: rssiValue(txPower),
                                                advertisingSID: sid, data: data))
        }
    }
}
