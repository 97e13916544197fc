// The per-advertisement path, measured: AD walk → iBeacon decode → Kalman filter → distance →
// zone and presence update, on one core.
//
//   nearplay-bench path [count] [beacons] [range-interval]   rate over prepared advertisements
//       (default 1,000,000 advertisements from 1,000 beacons, range events at most once a second per
//       beacon as `nearplay scan` and `replay` write them; 0 writes one at every sighting)
//   nearplay-bench memory [beacons]         peak RSS while tracking that many beacons (default 10,000)
//   nearplay-bench write-ads FILE [count] [beacons]   the same advertisements as hex lines, for other tools
//   nearplay-bench hci [count] [beacons] [reports-per-event]   HCI event bytes → proximity events:
//       the raw HCI scanner's path (LE Advertising Report events, H4 byte first, decoded by
//       HCIAdvertisementDecoder, then the proximity pipeline), in reports per second
import BeaconFrames
import Foundation
import Ranging

func advertisingData(beacon: Int) -> [UInt8] {
    IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: UInt16(beacon / 65536 + 1),
            minor: UInt16(beacon % 65536), measuredPower: -59).advertisingData()
}

/// Advertisement `i` of a run: beacons take turns, 10 per second each, RSSI wandering.
func advertisement(_ i: Int, beacons: Int, pool: [[UInt8]]) -> Advertisement {
    let beacon = i % beacons
    let rssi = -50 - (i &* 2654435761 >> 7) % 40
    return Advertisement(time: Double(i) / Double(beacons * 10), address: BluetoothAddress(0xC0, 0xFF, 0xEE, 0, UInt8(beacon >> 8 & 0xFF), UInt8(beacon & 0xFF)),
                         rssi: rssi, data: pool[beacon])
}

func peakResidentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
    return kilobytes / 1024
}

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "path"

switch mode {
case "path":
    let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
    let beacons = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1_000
    let rangeInterval = arguments.dropFirst(3).first.flatMap { Double($0) } ?? 1
    let pool = (0..<beacons).map(advertisingData)
    let prepared = (0..<count).map { advertisement($0, beacons: beacons, pool: pool) }
    var bestRate = 0.0
    var eventsSeen = 0
    for round in 1...5 {
        var tracker = ProximityTracker(configuration: RangingConfiguration(rangeInterval: rangeInterval))
        var events: [ProximityEvent] = []
        events.reserveCapacity(8)
        var ranges = 0
        let start = DispatchTime.now().uptimeNanoseconds
        prepared.withUnsafeBufferPointer { advertisements in
            for index in advertisements.indices {
                guard let sighting = Sighting(advertisements[index]) else { continue }
                events.removeAll(keepingCapacity: true)
                tracker.observe(sighting, into: &events)
                ranges &+= events.count
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let rate = Double(count) / seconds
        bestRate = max(bestRate, rate)
        eventsSeen = ranges
        print(String(format: "round %d: %.0f advertisements/s (%.3f s, %d events, %d beacons tracked)",
                     round, rate, seconds, ranges, tracker.count))
    }
    let expectedRanges = rangeInterval == 0 ? count : Int(Double(count) / Double(beacons * 10) / rangeInterval) * beacons
    precondition(eventsSeen >= expectedRanges, "too few range events: \(eventsSeen), expected at least \(expectedRanges)")
    print(String(format: "RESULT path_ads_per_second=%.0f count=%d beacons=%d range_interval=%g", bestRate, count, beacons, rangeInterval))

case "hci":
    let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
    let beacons = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1_000
    let perEvent = max(1, min(arguments.dropFirst(3).first.flatMap { Int($0) } ?? 1, 8))
    let pool = (0..<beacons).map(advertisingData)
    // The events a controller sends: ADV_NONCONN_IND, public address, the iBeacon AD, RSSI.
    var events: [[UInt8]] = []
    var times: [Double] = []
    for first in stride(from: 0, to: count, by: perEvent) {
        var parameters: [UInt8] = [HCIEvent.leAdvertisingReport, UInt8(min(perEvent, count - first))]
        for i in first..<min(first + perEvent, count) {
            let ad = advertisement(i, beacons: beacons, pool: pool)
            parameters += [0x03, 0x00] + ad.address.littleEndianBytes + [UInt8(ad.data.count)] + ad.data + [UInt8(bitPattern: Int8(ad.rssi!))]
        }
        events.append([HCIEvent.h4EventPacketType, HCIEvent.leMetaEventCode, UInt8(parameters.count)] + parameters)
        times.append(Double(first) / Double(beacons * 10))
    }
    var bestRate = 0.0
    for round in 1...5 {
        var decoder = HCIAdvertisementDecoder()
        var pipeline = ProximityPipeline(configuration: RangingConfiguration(rangeInterval: 1))
        var heard: [Advertisement] = []
        var proximityEvents: [ProximityEvent] = []
        var produced = 0
        var reports = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for (index, event) in events.enumerated() {
            heard.removeAll(keepingCapacity: true)
            try decoder.decode(event, framing: .h4, time: times[index], into: &heard)
            for advertisement in heard {
                proximityEvents.removeAll(keepingCapacity: true)
                _ = pipeline.feed(advertisement, into: &proximityEvents)
                produced &+= proximityEvents.count
            }
            reports &+= heard.count
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        precondition(reports == count, "decoded \(reports) reports, sent \(count)")
        let rate = Double(count) / seconds
        bestRate = max(bestRate, rate)
        print(String(format: "round %d: %.0f reports/s (%.3f s, %d events, %d beacons tracked)",
                     round, rate, seconds, produced, pipeline.tracker.count))
    }
    print(String(format: "RESULT hci_reports_per_second=%.0f count=%d beacons=%d reports_per_event=%d", bestRate, count, beacons, perEvent))

case "memory":
    let beacons = arguments.dropFirst().first.flatMap { Int($0) } ?? 10_000
    let pool = (0..<beacons).map(advertisingData)
    var tracker = ProximityTracker(configuration: RangingConfiguration(rangeInterval: 0))
    var events: [ProximityEvent] = []
    for i in 0..<(beacons * 50) {
        guard let sighting = Sighting(advertisement(i, beacons: beacons, pool: pool)) else { continue }
        events.removeAll(keepingCapacity: true)
        tracker.observe(sighting, into: &events)
    }
    print(String(format: "RESULT peak_rss_mb=%.1f beacons_tracked=%d", peakResidentMegabytes(), tracker.count))

case "write-ads":
    guard let path = arguments.dropFirst().first else {
        FileHandle.standardError.write(Data("usage: nearplay-bench write-ads FILE [count] [beacons]\n".utf8))
        exit(64)
    }
    let count = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1_000_000
    let beacons = arguments.dropFirst(3).first.flatMap { Int($0) } ?? 1_000
    let pool = (0..<beacons).map(advertisingData)
    var text = ""
    text.reserveCapacity(count * 61)
    for i in 0..<count { text += Hex.encode(pool[i % beacons]) + "\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)

default:
    FileHandle.standardError.write(Data("unknown mode \(mode): use path, hci, memory or write-ads\n".utf8))
    exit(64)
}
