import ArgumentParser
import BeaconFrames

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Say what a frame, AD payload or HCI event is, or exactly why it is not one.",
        discussion: """
        The hex may be an HCI LE advertising report event (starting with the H4 byte 04 or the \
        event code 3E), advertising data (AD structures as on air), or manufacturer data from the \
        company id on (e.g. 4c000215…). Spaces and colons between bytes are ignored. Exits 65 when \
        the bytes hold no beacon frame.
        """
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case auto, hci, ad, manufacturer
    }

    @Argument(help: "The bytes in hex.")
    var hex: String

    @Option(name: .customLong("as"), help: "What the bytes are: \(Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var kind: Kind = .auto

    func run() throws {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch {
            throw ValidationError("The argument is not hex: \(error).")
        }
        let kind = self.kind == .auto ? Self.guess(bytes) : self.kind
        var found = false
        switch kind {
        case .hci:
            do {
                let reports = try HCIEvent.advertisingReports(bytes)
                for (i, report) in reports.enumerated() {
                    StandardOutput.line("HCI LE \(report.isExtended ? "extended " : "")advertising report \(i + 1) of \(reports.count): \(report.legacyEventName), address \(report.address) (\(report.addressType?.rawValue ?? "type \(report.addressTypeCode)")), RSSI \(report.rssi.map { "\($0) dBm" } ?? "unavailable")")
                    found = describe(report.data, indent: "  ") || found
                }
            } catch {
                StandardOutput.line("not an HCI LE advertising report event: \(error)")
            }
        case .manufacturer:
            found = describeManufacturerData(bytes)
        case .ad, .auto:
            found = describe(bytes, indent: "")
        }
        if !found { throw Diagnostics.dataError }
    }

    /// HCI events start with 04 3E or 3E; manufacturer data with Apple's iBeacon signature
    /// 4C 00 02 15 or an AltBeacon code BE AC after the company id (24 or 25 bytes in all);
    /// anything else is read as advertising data.
    static func guess(_ bytes: [UInt8]) -> Kind {
        if bytes.count >= 3, bytes[1] == 0x3E || bytes[0] == 0x3E { return .hci }
        if bytes.starts(with: [0x4C, 0x00, 0x02]) { return .manufacturer }
        if bytes.count >= 4, bytes[2] == 0xBE, bytes[3] == 0xAC, (24...26).contains(bytes.count) { return .manufacturer }
        return .ad
    }

    /// Prints the AD structures and any frames; true when a beacon frame was found.
    private func describe(_ bytes: [UInt8], indent: String) -> Bool {
        let ad = AdvertisingData(parsing: bytes)
        if bytes.isEmpty { StandardOutput.line(indent + "no advertising data (0 bytes)") }
        for s in ad.structures {
            StandardOutput.line(indent + "AD at byte \(s.offset): \(s.type) (0x\(Hex.encode([s.type.rawValue]))), \(s.data.count) bytes: \(Hex.encode(s.data))")
        }
        for problem in ad.problems { StandardOutput.line(indent + "problem: \(problem)") }
        let (frames, misses) = BeaconFrame.decodeAll(ad)
        for frame in frames { StandardOutput.line(indent + describe(frame)) }
        for miss in misses { StandardOutput.line(indent + "not a beacon frame: \(miss)") }
        if frames.isEmpty, misses.isEmpty, !bytes.isEmpty {
            StandardOutput.line(indent + "no beacon frame: no iBeacon or AltBeacon manufacturer data, no Eddystone (0xFEAA) or Exposure Notification (0xFD6F) service data")
        }
        return !frames.isEmpty
    }

    private func describeManufacturerData(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2 else {
            StandardOutput.line("manufacturer data needs a 2-byte company identifier; got \(bytes.count) bytes")
            return false
        }
        let company = CompanyIdentifier(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        let rest = Array(bytes.dropFirst(2))
        do {
            StandardOutput.line(describe(.iBeacon(try IBeacon(company: company, manufacturerData: rest))))
            return true
        } catch let iBeaconError {
            do {
                StandardOutput.line(describe(.altBeacon(try AltBeacon(company: company, manufacturerData: rest))))
                return true
            } catch {
                StandardOutput.line("manufacturer data of company \(company) is not a beacon frame: as an iBeacon, \(iBeaconError.shifted(by: 2)); as an AltBeacon, \(error.shifted(by: 2))")
                return false
            }
        }
    }

    private func describe(_ frame: BeaconFrame) -> String {
        switch frame {
        case let .iBeacon(f):
            "iBeacon: UUID \(f.uuid), major \(f.major), minor \(f.minor), measured power \(f.measuredPower == 0 ? "not set" : "\(f.measuredPower) dBm")  [\(f.identity)]"
        case let .altBeacon(f):
            "AltBeacon: manufacturer \(f.manufacturer), ID1 \(f.id1), ID2 \(f.id2), ID3 \(f.id3), measured power \(f.measuredPower) dBm, reserved \(f.manufacturerReserved.map { "0x" + Hex.encode([$0]) } ?? "absent")  [\(f.identity)]"
        case let .eddystone(.uid(f)):
            "Eddystone-UID: namespace \(Hex.encode(f.namespace)), instance \(Hex.encode(f.instance)), TX power at 0 m \(f.txPower) dBm  [\(f.identity)]"
        case let .eddystone(.url(f)):
            "Eddystone-URL: \(f.url), TX power at 0 m \(f.txPower) dBm"
        case let .eddystone(.tlm(f)):
            "Eddystone-TLM: battery \(f.batteryMillivolts) mV, temperature \(f.temperatureCelsius.map { "\($0) °C" } ?? "not supported"), \(f.advertisingCount) advertisements, uptime \(Double(f.uptimeTenths) / 10) s"
        case let .eddystone(.encryptedTLM(f)):
            "Eddystone-TLM (encrypted): data \(Hex.encode(f.encryptedData)), salt \(f.salt), MIC \(f.messageIntegrityCheck)"
        case let .eddystone(.eid(f)):
            "Eddystone-EID: ephemeral id \(Hex.encode(f.ephemeralIdentifier)), TX power at 0 m \(f.txPower) dBm"
        case let .exposureNotification(f):
            "Exposure Notification: RPI \(Hex.encode(f.rollingProximityIdentifier)), metadata \(Hex.encode(f.associatedEncryptedMetadata))"
        }
    }
}
