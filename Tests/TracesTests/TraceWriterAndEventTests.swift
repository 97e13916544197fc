import BeaconFrames
import Foundation
import Ranging
import Testing
import Traces

@Suite struct TraceWriterAndEventTests {
    static let beacon = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2")!
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!

    @Test func writesTheFormatOfDesignMD() throws {
        let ad = try Hex.decode("1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        let line = TraceWriter.line(Advertisement(time: 12.345, address: Self.address, rssi: -63, data: ad), truthDistance: 1)
        #expect(line == #"{"t":12.345,"addr":"C0:FF:EE:00:00:01","rssi":-63,"ad":"1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5","truth_m":1.000}"#)
        #expect(TraceWriter.line(Advertisement(time: 0, address: Self.address, rssi: nil, data: ad)) == nil)
    }

    @Test func writtenTracesReadBack() throws {
        let ad = try Hex.decode("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        let advertisements = (0..<50).map {
            Advertisement(time: Double($0) / 10, address: Self.address, addressType: $0.isMultiple(of: 2) ? .public : .random,
                          rssi: -50 - $0, data: ad, receiver: $0 < 25 ? Receiver("a \"quoted\" rx") : nil)
        }
        var text = TraceWriter.header(source: "round trip") + "\n"
        for a in advertisements { text += TraceWriter.line(a, truthDistance: 2.5)! + "\n" }
        let result = try TraceReader.read(bytes: Array(text.utf8), name: "rt")
        #expect(result.issues.isEmpty)
        #expect(result.records.count == advertisements.count)
        let mismatches = zip(result.records, advertisements).filter { $0.advertisement != $1 }.count
        #expect(mismatches == 0)
        #expect(result.records.allSatisfy { $0.truthDistance == 2.5 })
    }

    @Test func eventsAreWrittenExactly() {
        let enter = ProximityEvent(kind: .enter, time: 0.1, identity: Self.beacon, address: Self.address, rssi: -63)
        let range = ProximityEvent(kind: .range, time: 0.1, identity: Self.beacon, address: Self.address, rssi: -63,
                                   filteredRSSI: -62.43, distance: 1.0249, zone: .near)
        let unknown = ProximityEvent(kind: .range, time: 2, identity: Self.beacon, address: Self.address, rssi: -70,
                                     filteredRSSI: -70, distance: nil, zone: .unknown)
        let exit = ProximityEvent(kind: .exit, time: 12.3, identity: Self.beacon, address: Self.address, receiver: Receiver("hall"))
        #expect(EventFormat.json(enter) == #"{"t":0.100,"event":"enter","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-63}"#)
        #expect(EventFormat.json(range, truthDistance: 1.0) == #"{"t":0.100,"event":"range","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-63,"rssi_filtered":-62.4,"distance_m":1.02,"zone":"near","truth_m":1.0}"#)
        var withInterval = range
        withInterval.distanceInterval = 0.6789...1.8
        #expect(EventFormat.json(withInterval).contains(#""distance_m":1.02,"distance_lo_m":0.68,"distance_hi_m":1.80,"zone":"near"}"#))
        #expect(EventFormat.json(unknown).hasSuffix(#""rssi":-70,"rssi_filtered":-70.0,"distance_m":null,"zone":"unknown"}"#))
        #expect(EventFormat.json(exit) == #"{"t":12.300,"event":"exit","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rx":"hall"}"#)
        for line in [enter, range, unknown, exit].map({ EventFormat.json($0) }) {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line) is not JSON")
        }
    }
}
