import BeaconFrames
import Foundation
import Testing
import Traces

@Suite struct TraceReaderTests {
    static let ad = "1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"

    static func read(_ text: String) throws -> TraceReader.Trace {
        try TraceReader.read(bytes: Array(text.utf8), name: "t.jsonl")
    }

    @Test func readsRecordsWithOptionalKeys() throws {
        let result = try Self.read("""
        {"nearplay_trace":1,"created":"2026-01-01T00:00:00Z","source":"test","extra":{"kept":true}}
        {"t":0.5,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)","truth_m":1.0,"addr_type":"random","rx":"pi","other":1}

        {"t":1.0,"addr":"c0:ff:ee:00:00:02","rssi":-70,"ad":"\(Self.ad)"}
        """)
        #expect(result.issues.isEmpty)
        #expect(result.header.source == "test")
        #expect(result.header.json.contains("\"kept\""))
        #expect(result.records.count == 2)
        let first = result.records[0]
        #expect(first.advertisement.time == 0.5)
        #expect(first.advertisement.addressType == .random)
        #expect(first.advertisement.receiver?.name == "pi")
        #expect(first.truthDistance == 1.0)
        #expect(first.line == 2)
        #expect(result.records[1].line == 4)
        #expect(result.records[1].advertisement.address.description == "C0:FF:EE:00:00:02")
    }

    @Test func reportsEachBadLineWithItsNumberAndKeepsTheRest() throws {
        let result = try Self.read("""
        {"nearplay_trace":1}
        {"t":0.1,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)"}
        {"t":0.2,"addr":"C0:FF:EE:00:00:01","rssi":-63.5,"ad":"\(Self.ad)"}
        {"t":0.3,"addr":"C0:FF:EE:00:01","rssi":-63,"ad":"\(Self.ad)"}
        {"t":0.4,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"1aff4z"}
        {"t":0.5,"addr":"C0:FF:EE:00:00:01","ad":"\(Self.ad)"}
        {"t":0.6,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)"
        {"t":0.05,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)"}
        {"t":0.7,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)","addr_type":"static"}
        {"t":"0.8","addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"\(Self.ad)"}
        {"t":0.9,"addr":"C0:FF:EE:00:00:01","rssi":-60,"ad":"\(Self.ad)"}
        """)
        #expect(result.records.map(\.line) == [2, 11])
        #expect(result.issues.map(\.line) == [3, 4, 5, 6, 7, 8, 9, 10])
        let messages = result.issues.map(\.description)
        #expect(messages[0].hasPrefix("t.jsonl:3: field \"rssi\""))
        #expect(messages[1].contains("\"addr\""))
        #expect(messages[2].contains("\"ad\"") && messages[2].contains("byte 5"))
        #expect(messages[3].contains("missing field \"rssi\""))
        #expect(messages[4].contains("not valid JSON"))
        #expect(messages[5].contains("earlier than the line before"))
        #expect(messages[6].contains("\"addr_type\""))
        #expect(messages[7].contains("\"t\""))
    }

    @Test func refusesFilesThatAreNotTraces() {
        #expect(throws: TraceFileError.self) { try Self.read("") }
        #expect(throws: TraceFileError.self) { try Self.read("hello\n") }
        #expect(throws: TraceFileError.self) { try Self.read("{\"source\":\"x\"}\n") }
        do {
            _ = try Self.read("{\"nearplay_trace\":2}\n")
            Issue.record("version 2 was accepted")
        } catch {
            #expect("\(error)" == "t.jsonl:1: trace version 2 is not supported; this Nearplay reads version 1")
        }
        #expect(throws: TraceFileError.self) { try TraceReader.read(path: "/nonexistent/trace.jsonl") }
        #expect(throws: TraceFileError.self) { try Self.read("{\"nearplay_trace\":true}\n") }
        #expect(throws: TraceFileError.self) { try Self.read("{\"nearplay_trace\":\"1\"}\n") }
    }

    @Test func reportsAMalformedPresenceInsteadOfDroppingItSilently() throws {
        let result = try Self.read("{\"nearplay_trace\":1,\"presence\":[{\"beacon\":1}]}\n")
        #expect(result.header.presence.isEmpty)
        #expect(result.issues.first?.message.contains("presence") == true)
    }

    @Test func acceptsBTSnoopWhereverATraceIs() throws {
        let shared = ProcessInfo.processInfo.environment["NEARPLAY_SHARED_DATA"].map(URL.init(fileURLWithPath:))
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/data")
        let url = shared.appendingPathComponent("captures/horizon74_btsnoop_hci.log")
        let result = try TraceReader.read(path: url.path)
        #expect(result.issues.isEmpty)
        #expect(result.records.count == 412)
        // Time counts from the capture's first record; its first advertising report comes 0.7 s in.
        #expect((result.records.first?.advertisement.time ?? -1) > 0 && (result.records.first?.advertisement.time ?? 2) < 1)
        #expect((result.records.last?.advertisement.time ?? 200) < 147, "the capture spans 147 s")
        let times = result.records.map(\.advertisement.time)
        #expect(times == times.sorted())
        #expect(result.records.compactMap { Sighting($0.advertisement) }.count == 11)
    }

    @Test func reportsMalformedCaptureRecordsWithTheirByteOffset() throws {
        let good = try Hex.decode("3e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1")
        let bad = Array(good.prefix(20))  // declared length 0x2B, 18 bytes present
        var bytes = BTSnoop.header(datalink: .h1)
        bytes += BTSnoop.encode(.init(flags: 3, timestamp: 0, data: good))
        let badRecordOffset = bytes.count
        bytes += BTSnoop.encode(.init(flags: 3, timestamp: 1_000_000, data: bad))
        bytes += BTSnoop.encode(.init(flags: 3, timestamp: 2_000_000, data: good))
        let result = try TraceReader.read(bytes: bytes, name: "c.log")
        #expect(result.records.map(\.advertisement.time) == [0, 2])
        #expect(result.issues.count == 1)
        #expect(result.issues.first?.line == 2)
        #expect(result.issues.first?.byteOffset == badRecordOffset + 24 + 2)
    }
}
