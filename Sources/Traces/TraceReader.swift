import BeaconFrames
import Foundation

/// Reads trace files: trace v1 (JSON Lines) or btsnoop captures, told apart by their first bytes.
///
/// Bad lines are reported through `issues` with their line number and skipped; only a file that
/// is not a trace at all throws.
public enum TraceReader {
    /// A file read: its header, its records, and what was wrong with the lines skipped.
    public struct Trace: Sendable {
        public var header: TraceHeader
        public var records: [TraceRecord]
        public var issues: [TraceIssue]
    }

    public static func read(path: String) throws(TraceFileError) -> Trace {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw TraceFileError(file: path, message: exists ? "cannot be read: check its permissions" : "no such file")
        }
        return try read(bytes: [UInt8](data), name: path)
    }

    public static func read(bytes: [UInt8], name: String) throws(TraceFileError) -> Trace {
        if BTSnoop.isBTSnoop(bytes) { return try readBTSnoop(bytes, name: name) }
        return try readJSONLines(bytes, name: name)
    }

    // MARK: trace v1

    private struct Line: Decodable {
        var t: Double
        var addr: String
        var rssi: Double
        var ad: String
        var truth_m: Double?
        var addr_type: String?
        var rx: String?
    }

    static func readJSONLines(_ bytes: [UInt8], name: String) throws(TraceFileError) -> Trace {
        let decoder = JSONDecoder()
        var header: TraceHeader?
        var records: [TraceRecord] = []
        var issues: [TraceIssue] = []
        var lastTime = -Double.infinity
        var lineNumber = 0
        var start = 0
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            lineNumber += 1
            defer { start = end + 1 }
            var slice = bytes[start..<end]
            if slice.last == 0x0D { slice = slice.dropLast() }
            if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            let text = Data(slice)
            guard header != nil else {
                header = try parseHeader(text, name: name, line: lineNumber, issues: &issues)
                continue
            }
            do {
                let line = try decoder.decode(Line.self, from: text)
                let record = try validate(line, lineNumber: lineNumber, lastTime: lastTime)
                lastTime = record.advertisement.time
                records.append(record)
            } catch let error as DecodingError {
                issues.append(TraceIssue(file: name, line: lineNumber, message: describe(error)))
            } catch let error as LineError {
                issues.append(TraceIssue(file: name, line: lineNumber, message: error.message))
            } catch {
                issues.append(TraceIssue(file: name, line: lineNumber, message: "\(error)"))
            }
        }
        guard let header else {
            throw TraceFileError(file: name, message: "is empty: a trace starts with a header line {\"nearplay_trace\":1, …}")
        }
        return Trace(header: header, records: records, issues: issues)
    }

    /// The header's typed keys. Others are kept in the header's JSON text.
    private struct HeaderLine: Decodable {
        var nearplay_trace: Int?
        var created: String?
        var source: String?
    }

    private struct PresenceKey: Decodable {
        var presence: [PresenceWindow]?
    }

    private static func parseHeader(_ text: Data, name: String, line: Int, issues: inout [TraceIssue]) throws(TraceFileError) -> TraceHeader {
        guard (try? JSONSerialization.jsonObject(with: text)) is [String: Any] else {
            throw TraceFileError(file: name, line: line, message: "is not a Nearplay trace or btsnoop capture: the first line is not a JSON object (a trace starts with {\"nearplay_trace\":1, …})")
        }
        let header: HeaderLine
        do { header = try JSONDecoder().decode(HeaderLine.self, from: text) } catch {
            throw TraceFileError(file: name, line: line, message: "the header is malformed: \"nearplay_trace\" must be the integer 1 and \"created\" and \"source\" strings")
        }
        guard let version = header.nearplay_trace else {
            throw TraceFileError(file: name, line: line, message: "the header has no \"nearplay_trace\" version number")
        }
        guard version == 1 else {
            throw TraceFileError(file: name, line: line, message: "trace version \(version) is not supported; this Nearplay reads version 1")
        }
        var presence: [PresenceWindow] = []
        do {
            presence = try JSONDecoder().decode(PresenceKey.self, from: text).presence ?? []
        } catch {
            issues.append(TraceIssue(file: name, line: line, message: "the header's \"presence\" is not a list of {\"beacon\",\"start\",\"end\"}; evaluation will not measure enter and exit latency"))
        }
        return TraceHeader(version: 1, created: header.created, source: header.source,
                           json: String(decoding: text, as: UTF8.self), presence: presence)
    }

    private struct LineError: Error { var message: String }

    private static func validate(_ line: Line, lineNumber: Int, lastTime: Double) throws -> TraceRecord {
        guard line.t.isFinite, line.t >= 0 else { throw LineError(message: "field \"t\": \(line.t) is not a time in seconds (a finite number ≥ 0)") }
        guard line.t >= lastTime else {
            throw LineError(message: "field \"t\": \(line.t) is earlier than the line before (\(lastTime)); times must not decrease")
        }
        guard let address = BluetoothAddress(line.addr) else {
            throw LineError(message: "field \"addr\": \"\(line.addr)\" is not a Bluetooth address like C0:FF:EE:00:00:01")
        }
        let data: [UInt8]
        do { data = try Hex.decode(line.ad) } catch {
            throw LineError(message: "field \"ad\": \(error)")
        }
        var addressType: AddressType?
        if let text = line.addr_type {
            guard let type = AddressType(rawValue: text) else {
                throw LineError(message: "field \"addr_type\": \"\(text)\" is neither \"public\" nor \"random\"")
            }
            addressType = type
        }
        if let truth = line.truth_m, !(truth.isFinite && truth >= 0) {
            throw LineError(message: "field \"truth_m\": \(truth) is not a distance in metres")
        }
        guard line.rssi.isFinite, line.rssi == line.rssi.rounded(), abs(line.rssi) < 1000 else {
            throw LineError(message: "field \"rssi\": \(line.rssi) is not an integer number of dBm")
        }
        let advertisement = Advertisement(time: line.t, address: address, addressType: addressType, rssi: Int(line.rssi),
                                          data: data, receiver: line.rx.map(Receiver.init))
        return TraceRecord(advertisement: advertisement, truthDistance: line.truth_m, line: lineNumber)
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case let .keyNotFound(key, _):
            return "missing field \"\(key.stringValue)\""
        case let .typeMismatch(type, context):
            let expected = type == Int.self ? "an integer" : type == Double.self ? "a number" : type == String.self ? "a string" : "\(type)"
            return "field \"\(path(context))\": expected \(expected)"
        case let .valueNotFound(_, context):
            return "field \"\(path(context))\" is null"
        case let .dataCorrupted(context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            let key = path(context)
            return key == "rssi" ? "field \"rssi\": expected an integer number of dBm" : "field \"\(key)\": \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    // MARK: btsnoop

    static func readBTSnoop(_ bytes: [UInt8], name: String) throws(TraceFileError) -> Trace {
        let file: BTSnoop.File
        do { file = try BTSnoop.parse(bytes) } catch {
            throw TraceFileError(file: name, message: "is not a usable btsnoop capture: \(error)")
        }
        var issues = file.problems.map { TraceIssue(file: name, message: "\($0)") }
        var records: [TraceRecord] = []
        let start = file.records.first?.timestamp ?? 0
        // Extended advertising data may come in fragments, joined here.
        var assembler = HCIReportAssembler()
        var lastTime = 0.0
        for (number, record) in file.records.enumerated() {
            guard let event = record.hciEvent(datalink: file.datalink), event.count >= 3,
                  event[0] == HCIEvent.leMetaEventCode,
                  event[2] == HCIEvent.leAdvertisingReport || event[2] == HCIEvent.leExtendedAdvertisingReport else { continue }
            let dataOffset = record.fileOffset + 24 + (file.datalink == .h4 ? 1 : 0)
            // Wrapping subtraction in floating point: timestamps come from the file and may be anything.
            let time = (Double(record.timestamp) - Double(start)) / 1_000_000
            guard time >= lastTime else {
                issues.append(TraceIssue(file: name, line: number + 1, byteOffset: record.fileOffset,
                                         message: "record \(number + 1) is timestamped before the record ahead of it; skipped"))
                continue
            }
            do {
                for report in try HCIEvent.advertisingReports(event, framing: .eventCode) {
                    let data: [UInt8]
                    switch assembler.add(report, tag: number + 1) {
                    case .complete(let whole): data = whole
                    case .incomplete: continue
                    case .truncated:
                        issues.append(TraceIssue(file: name, line: number + 1, byteOffset: record.fileOffset,
                                                 message: "record \(number + 1): the controller truncated the extended advertising data of \(report.address); skipped"))
                        continue
                    }
                    lastTime = time
                    records.append(TraceRecord(
                        advertisement: Advertisement(time: time, address: report.address, addressType: report.addressType,
                                                     rssi: report.rssi, data: data),
                        line: number + 1))
                }
            } catch {
                let at: Int? = switch error {
                case let .truncated(_, offset, _, _), let .wrongLength(_, offset, _, _), let .unexpectedValue(_, offset, _, _): offset
                default: nil
                }
                issues.append(TraceIssue(file: name, line: number + 1, byteOffset: at.map { dataOffset + $0 },
                                         message: "record \(number + 1) is a malformed LE advertising report: \(error)"))
            }
        }
        for (address, record) in assembler.unfinished {
            issues.append(TraceIssue(file: name, line: record,
                                     message: "record \(record): extended advertising data of \(address) never completed before the capture ended; skipped"))
        }
        let startTime = file.records.first?.unixTime ?? 0
        let created = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: startTime.isFinite ? startTime : 0))
        let header = TraceHeader(version: 1, created: created, source: "btsnoop capture \(name)",
                                 json: "{\"nearplay_trace\":1,\"source\":\"btsnoop\"}")
        return Trace(header: header, records: records, issues: issues)
    }
}
