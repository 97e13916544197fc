import BeaconFrames
import Foundation
import Ranging
import Testing

/// The following filter and the zone dwell: a walker's estimate settles soon after the stop, and a
/// still beacon's zone changes no more often than with the slow Kalman filter alone.
@Suite struct FollowingFilterTests {
    static let measuredPower = -59.0
    static let exponent = 2.8

    /// Readings of a beacon at `distance(t)`, one every `interval` s (plus up to 10 ms), in the
    /// simulated air's room: n = 2.8, 4 dB of noise, rounded to whole dB, 10 % lost.
    static func readings(interval: Double, until end: Double, seed: UInt64, distance: (Double) -> Double) -> [(time: Double, rssi: Int)] {
        var random = SplitMix64(seed: seed)
        var readings: [(time: Double, rssi: Int)] = []
        var k = 0.0
        while k * interval <= end {
            let time = k * interval + random.nextDouble() * 0.01
            k += 1
            if random.nextDouble() < 0.1 { continue }
            let mean = PathLoss.rssi(atDistance: distance(time), measuredPower: measuredPower, exponent: exponent)
            readings.append((time, Int((mean + 4 * random.nextGaussian()).rounded())))
        }
        return readings
    }

    /// 30 s at 14 m, in to 1.5 m at 1.5 m/s, standing after `stop`.
    static let stop = 30 + 12.5 / 1.5
    static func walk(_ time: Double) -> Double {
        time < 30 ? 14 : time < stop ? 14 - 1.5 * (time - 30) : 1.5
    }

    /// Seconds from the stop until the estimate stays within ±30 % of 1.5 m (60 s standing).
    static func settling(_ kind: RSSIFilterKind, interval: Double, seed: UInt64) -> Double {
        var filter = RSSIFilter(kind)
        var after: [(time: Double, metres: Double)] = []
        for reading in readings(interval: interval, until: stop + 60, seed: seed, distance: walk) {
            let value = filter.update(Double(reading.rssi), at: reading.time)
            if reading.time >= stop {
                after.append((reading.time, PathLoss.distance(rssi: value, measuredPower: measuredPower, exponent: exponent)))
            }
        }
        guard let lastOff = after.lastIndex(where: { abs($0.metres - 1.5) > 0.3 * 1.5 }) else { return 0 }
        return lastOff + 1 < after.count ? after[lastOff + 1].time - stop : .infinity
    }

    static func median(_ values: [Double]) -> Double { Calibration.median(values) ?? .infinity }

    @Test(arguments: [(0.1, 2.0), (1.0, 5.0)])
    func aWalkerSettlesWithinTheBoundAfterStopping(interval: Double, bound: Double) {
        let seeds: [UInt64] = [1, 2, 3, 4, 5]
        let following = Self.median(seeds.map { Self.settling(.defaultFollowing, interval: interval, seed: $0) })
        let slow = Self.median(seeds.map { Self.settling(.defaultKalman, interval: interval, seed: $0) })
        #expect(following <= bound, "following filter: \(following) s at \(interval) s intervals")
        // The slow filter alone does not: what this test guards.
        #expect(slow > bound, "slow Kalman filter: \(slow) s")
    }

    /// Zone changes of a tracked beacon standing at `distance` for 10 minutes.
    static func zoneChanges(_ configuration: RangingConfiguration, distance: Double, interval: Double, seed: UInt64) -> Int {
        var tracker = ProximityTracker(configuration: configuration)
        let identity = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!
        let data = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1,
                           measuredPower: Int8(measuredPower)).advertisingData()
        var events: [ProximityEvent] = []
        var changes = 0
        var last: Zone?
        for reading in readings(interval: interval, until: 600, seed: seed, distance: { _ in distance }) {
            let advertisement = Advertisement(time: reading.time, address: BluetoothAddress(0xC0, 0xFF, 0xEE, 0, 0, 1),
                                              rssi: reading.rssi, data: data)
            guard let sighting = Sighting(advertisement) else { continue }
            events.removeAll(keepingCapacity: true)
            tracker.observe(sighting, into: &events)
            guard reading.time >= 30, let zone = tracker.track(identity)?.zone else { continue }
            if let last, last != zone { changes += 1 }
            last = zone
        }
        return changes
    }

    /// At the near/far boundary, where a still beacon flaps if anything does: the following
    /// filter with its dwell changes zone no more often than the slow filter reporting at once.
    @Test(arguments: [0.1, 1.0])
    func aStillBeaconAtABoundaryFlapsNoMoreThanWithTheSlowFilter(interval: Double) {
        let before = RangingConfiguration(filter: .defaultKalman, zones: ZoneBoundaries(dwell: 0))
        var now = 0, then = 0
        for seed: UInt64 in 1...5 {
            for distance in [0.5, 3.0] {
                now += Self.zoneChanges(RangingConfiguration(), distance: distance, interval: interval, seed: seed)
                then += Self.zoneChanges(before, distance: distance, interval: interval, seed: seed)
            }
        }
        #expect(then > 0, "the slow filter should flap at a boundary sometimes, or this test shows nothing")
        #expect(now <= then, "following: \(now) zone changes; slow filter without dwell: \(then)")
    }

    /// A still beacon's readings, however noisy, do not look like movement for long: over ten
    /// minutes at 10 Hz the slow filter restarts rarely.
    @Test func aStillBeaconRarelyRestartsTheSlowFilter() {
        var filter = RSSIFilter(.defaultFollowing)
        for reading in Self.readings(interval: 0.1, until: 600, seed: 7, distance: { _ in 2 }) {
            _ = filter.update(Double(reading.rssi), at: reading.time)
        }
        #expect(filter.restarts <= 2, "\(filter.restarts) restarts")
    }

    @Test func aStepIsFollowedWithinSecondsAndTheFilterIsDeterministic() {
        var filter = RSSIFilter(.defaultFollowing)
        for i in 0..<300 { _ = filter.update(-60, at: Double(i) * 0.1) }
        var value = 0.0
        for i in 300..<340 { value = filter.update(-80, at: Double(i) * 0.1) }
        #expect(abs(value + 80) < 2, "still at \(value) 4 s after a 20 dB step")
        #expect(filter.restarts >= 1)
    }

    /// A new zone is reported only once it has held for the dwell; unknown at once.
    @Test func theReportedZoneWaitsForTheDwell() {
        var tracker = ProximityTracker(configuration: RangingConfiguration(filter: .arma(coefficient: 1)))
        let data = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1, measuredPower: -59).advertisingData()
        let identity = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!
        var events: [ProximityEvent] = []
        func feed(_ time: Double, _ rssi: Int) -> Zone? {
            let advertisement = Advertisement(time: time, address: BluetoothAddress(0xC0, 0xFF, 0xEE, 0, 0, 1), rssi: rssi, data: data)
            tracker.observe(Sighting(advertisement)!, into: &events)
            return tracker.track(identity)?.zone
        }
        // 1 m is near at once (from unknown); 10 m (−87 dBm) must hold 2 s before it shows as far.
        #expect(feed(0, -59) == .near)
        #expect(feed(1, -87) == .near)
        #expect(feed(2, -87) == .near)
        #expect(feed(2.5, -59) == .near)  // back before the dwell: the count starts again
        #expect(feed(3, -87) == .near)
        #expect(feed(4.9, -87) == .near)
        #expect(feed(5, -87) == .far)
        #expect(tracker.track(identity)?.followedZone == .far)
    }
}
