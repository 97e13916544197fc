/// Joins the fragments of extended advertising data: a controller sends data longer than one
/// event holds as several LE Extended Advertising Reports, all but the last with data status 1
/// ("incomplete, more to come"); status 2 says it gave up and the rest is lost. Core
/// Specification Vol 4, Part E, §7.7.65.13. Legacy reports pass straight through.
///
/// Fragments are keyed by address and advertising set. Memory is bounded: at most
/// ``maximumPending`` advertisers mid-way at once and ``maximumDataLength`` bytes each (the
/// specification's limit), so a broken or hostile sender cannot grow it.
public struct HCIReportAssembler: Sendable {
    public static let maximumDataLength = 1650
    public static let maximumPending = 64

    private struct Key: Hashable {
        var address: BluetoothAddress
        var sid: UInt8?
    }

    /// The data so far and the caller's tag of its first fragment.
    private var pending: [Key: (data: [UInt8], tag: Int)] = [:]

    public init() {}

    /// What became of one report.
    public enum Outcome: Sendable, Hashable {
        /// The whole advertising data: this report's, after any earlier fragments.
        case complete([UInt8])
        /// A fragment, kept until the rest arrives.
        case incomplete
        /// The controller truncated the data (status 2), or it outgrew the specification's limit:
        /// what had arrived is dropped.
        case truncated
    }

    /// Fragments still waiting for the rest: the advertiser and the tag given with the first.
    public var unfinished: [(address: BluetoothAddress, tag: Int)] {
        pending.map { ($0.key.address, $0.value.tag) }.sorted { $0.tag < $1.tag }
    }

    /// Takes one report; `tag` (a record number, say) is remembered with a first fragment.
    public mutating func add(_ report: HCIAdvertisingReport, tag: Int = 0) -> Outcome {
        guard report.isExtended else { return .complete(report.data) }
        let key = Key(address: report.address, sid: report.advertisingSID)
        switch report.dataStatus {
        case 0:
            guard let earlier = pending.removeValue(forKey: key) else { return .complete(report.data) }
            guard earlier.data.count + report.data.count <= Self.maximumDataLength else { return .truncated }
            return .complete(earlier.data + report.data)
        case 1:
            if pending[key] == nil, pending.count >= Self.maximumPending { pending.removeAll() }
            pending[key, default: ([], tag)].data.append(contentsOf: report.data)
            if pending[key]!.data.count > Self.maximumDataLength {
                pending[key] = nil
                return .truncated
            }
            return .incomplete
        default:
            pending[key] = nil
            return .truncated
        }
    }
}

/// HCI event packets to ``Advertisement``s: the LE advertising report decoding of ``HCIEvent``,
/// fragments joined by ``HCIReportAssembler``. The raw HCI radio and btsnoop captures both go
/// through it; other events (command results, anything else a controller sends) yield nothing.
public struct HCIAdvertisementDecoder: Sendable {
    private var assembler = HCIReportAssembler()
    /// Reports whose data the controller truncated, so far.
    public private(set) var truncatedReports = 0

    public init() {}

    /// True when `event` (event code first) is an LE Meta event carrying advertising reports.
    public static func isAdvertisingReport(_ event: [UInt8], framing: HCIEvent.Framing) -> Bool {
        let start = framing == .h4 || (framing == .detect && event.first == HCIEvent.h4EventPacketType) ? 1 : 0
        return event.count >= start + 3 && event[start] == HCIEvent.leMetaEventCode
            && (event[start + 2] == HCIEvent.leAdvertisingReport || event[start + 2] == HCIEvent.leExtendedAdvertisingReport)
    }

    /// Appends the advertisements completed by one event packet, all at `time`. Other events
    /// append nothing; a malformed advertising report event throws with the byte offset and
    /// appends nothing.
    public mutating func decode(_ event: [UInt8], framing: HCIEvent.Framing = .detect, time: Double,
                                into advertisements: inout [Advertisement]) throws(FrameError) {
        guard Self.isAdvertisingReport(event, framing: framing) else { return }
        // All or nothing: a malformed event leaves no advertisement and no fragment behind.
        let countBefore = advertisements.count
        let assemblerBefore = assembler
        let truncatedBefore = truncatedReports
        do {
            try HCIEvent.forEachAdvertisingReport(event, framing: framing) { report in
                switch assembler.add(report) {
                case .complete(let data):
                    advertisements.append(Advertisement(time: time, address: report.address, addressType: report.addressType,
                                                        rssi: report.rssi, data: data))
                case .incomplete:
                    break
                case .truncated:
                    truncatedReports += 1
                }
            }
        } catch {
            advertisements.removeSubrange(countBefore...)
            assembler = assemblerBefore
            truncatedReports = truncatedBefore
            throw error
        }
    }
}
