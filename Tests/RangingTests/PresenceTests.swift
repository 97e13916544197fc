import BeaconFrames
import Ranging
import Testing

@Suite struct PresenceTests {
    static let beacon = BeaconIdentity.iBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!

    static func sighting(_ time: Double, rssi: Int? = -65, identity: BeaconIdentity = beacon) -> Sighting {
        Sighting(identity: identity, measuredPower: -59, rssi: rssi, time: time, address: address)
    }

    /// Sightings of a beacon advertising every `interval` s from `start` to `end`, losing each
    /// packet with probability `loss` (deterministic).
    static func transmissions(interval: Double, from start: Double, to end: Double, loss: Double, seed: UInt64 = 3) -> [Double] {
        var state = seed
        var times: [Double] = []
        var t = start
        while t <= end {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            if Double(state >> 11) / Double(1 << 53) >= loss { times.append(t) }
            t += interval
        }
        return times
    }

    @Test func entersAtTheFirstSightingAndRangesAtEach() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        tracker.observe(Self.sighting(1.0), into: &events)
        tracker.observe(Self.sighting(1.1), into: &events)
        #expect(events.map(\.kind) == [.enter, .range, .range])
        #expect(events[0].time == 1.0)
        #expect(events[1].zone != nil && events[1].distance != nil)
    }

    @Test func rangeIntervalLimitsRangeEvents() {
        var tracker = ProximityTracker(configuration: RangingConfiguration(rangeInterval: 1))
        var events: [ProximityEvent] = []
        for time in stride(from: 0.0, through: 4.95, by: 0.1) { tracker.observe(Self.sighting(time), into: &events) }
        #expect(events.filter { $0.kind == .range }.count == 5)
    }

    /// A 100 ms beacon losing a third of its packets: no false exit in 10 minutes, and once it
    /// stops, an exit well before AltBeacon's 10 s.
    @Test func thirdOfPacketsLostGivesNoFalseExitAndAPromptRealOne() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        let times = Self.transmissions(interval: 0.1, from: 0, to: 600, loss: 1.0 / 3)
        for time in times { tracker.observe(Self.sighting(time), into: &events) }
        #expect(events.filter { $0.kind == .exit }.isEmpty)
        tracker.advance(to: 700, into: &events)
        let exit = events.last { $0.kind == .exit }
        let latency = (exit?.time ?? .infinity) - (times.last ?? 0)
        #expect(latency <= 2.5, "exit came \(latency) s after the last packet")
        #expect(latency >= 1.5)
    }

    /// A 1 Hz beacon losing a third of its packets, for a day: false exits rarer than once an
    /// hour, and once it stops, an exit within AltBeacon's 10 s.
    @Test(arguments: [3, 4, 5] as [UInt64])
    func oneHertzBeaconWithAThirdLostExitsWithinTenSecondsAndRarelyFalsely(seed: UInt64) {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        let hours = 24.0
        let times = Self.transmissions(interval: 1, from: 0, to: hours * 3600, loss: 1.0 / 3, seed: seed)
        for time in times { tracker.observe(Self.sighting(time), into: &events) }
        let falseExits = events.filter { $0.kind == .exit }.count
        #expect(Double(falseExits) < hours, "\(falseExits) false exits in \(hours) h")
        // Each false exit needed eight packets lost in a row (expected 2400 · ⅓⁸ ≈ 0.37 an hour).
        #expect(falseExits <= 18)
        let track = tracker.track(Self.beacon)
        #expect(abs((track?.advertisingInterval ?? 0) - 1) < 0.01)
        #expect(abs((track?.packetLoss ?? 0) - 1.0 / 3) < 0.06, "loss estimate \(track?.packetLoss ?? -1)")
        tracker.advance(to: (hours + 1) * 3600, into: &events)
        let latency = (events.last { $0.kind == .exit }?.time ?? .infinity) - (times.last ?? 0)
        #expect(latency <= 10, "exit came \(latency) s after the last packet")
        #expect(latency >= 8)
    }

    /// The timeout maths on its own: the smallest run of losses rarer than the target rate.
    @Test func timeoutIsTheShortestRunOfLossesRarerThanTheTarget() {
        let presence = PresenceConfiguration()
        // 1 Hz, p = 1/3: 2400 received an hour; 2400 · (1/3)^8 = 0.37 ≤ 0.5 < 2400 · (1/3)^7 = 1.1.
        #expect(abs(presence.timeout(interval: 1, loss: 1.0 / 3) - 8.25) < 1e-9)
        // 10 Hz: k = 10, 1.025 s, raised to the 2 s floor.
        #expect(presence.timeout(interval: 0.1, loss: 1.0 / 3) == 2)
        // Every 10 s: capped at 30 s; unknown interval: the initial 30 s.
        #expect(presence.timeout(interval: 10, loss: 0.2) == 30)
        #expect(presence.timeout(interval: nil, loss: 0) == 30)
        // More loss, longer timeout; a stricter target, longer still.
        #expect(presence.timeout(interval: 1, loss: 0.5) > presence.timeout(interval: 1, loss: 1.0 / 3))
        let strict = PresenceConfiguration(falseExitsPerHour: 0.01)
        #expect(strict.timeout(interval: 1, loss: 1.0 / 3) > presence.timeout(interval: 1, loss: 1.0 / 3))
    }

    @Test func exitTimeoutAdaptsToASlowBeaconWithinBounds() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        // A beacon heard every 10 s (the NIST recordings): no false exits over an hour.
        for time in stride(from: 0.0, through: 3600, by: 10) { tracker.observe(Self.sighting(time), into: &events) }
        #expect(events.filter { $0.kind == .exit }.isEmpty)
        #expect(tracker.track(Self.beacon)?.exitTimeout == 30)
        tracker.finish(into: &events)
        #expect(events.last?.kind == .exit)
        #expect(events.last?.time == 3630)
    }

    @Test func exitCarriesTheMomentTheSilencePassedTheTimeout() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        for time in stride(from: 0.0, through: 5, by: 0.1) { tracker.observe(Self.sighting(time), into: &events) }
        let other = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 1, low: 2), major: 0, minor: 0)
        tracker.observe(Self.sighting(60, identity: other), into: &events)
        let exit = events.first { $0.kind == .exit }
        #expect(exit?.identity == Self.beacon)
        #expect(abs((exit?.time ?? 0) - 7.0) < 0.01)
        // The exit is written before the other beacon's enter.
        #expect(events.suffix(3).map(\.kind) == [.exit, .enter, .range])
    }

    /// Beacons with different timeouts going silent close together: the exits come out in time
    /// order, each at its own deadline.
    @Test func exitsComeOutInTimeOrderWhateverTheirTimeouts() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        let fast = Self.beacon
        let slow = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 9, low: 9), major: 0, minor: 0)
        let once = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 8, low: 8), major: 0, minor: 0)
        for time in stride(from: 0.0, through: 5, by: 0.1) { tracker.observe(Self.sighting(time, identity: fast), into: &events) }
        tracker.observe(Self.sighting(4.4, identity: slow), into: &events)
        tracker.observe(Self.sighting(4.5, identity: slow), into: &events)
        tracker.observe(Self.sighting(4.6, identity: once), into: &events)
        tracker.finish(into: &events)
        let exits = events.filter { $0.kind == .exit }
        #expect(exits.map(\.time) == exits.map(\.time).sorted(), "exits out of order: \(exits.map(\.time))")
        // Deadlines: the fast beacon 5.0 + 2 s; the other seen twice 0.1 s apart, so also 2 s: 4.5 + 2;
        // the one seen once keeps the initial 30 s. The fast one's heap entry from its first
        // sightings (2.1 s) is popped first and must not make it exit ahead of 6.5.
        #expect(exits.map(\.identity) == [slow, fast, once])
        #expect(zip(exits.map(\.time), [6.5, 7.0, 34.6]).allSatisfy { abs($0 - $1) < 0.01 }, "\(exits.map(\.time))")
    }

    /// A beacon that exits frees its slot; one that enters later takes it, and stale deadlines
    /// of the first must not make the second exit early.
    @Test func reusedSlotsIgnoreTheirPreviousBeaconsDeadlines() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        let first = Self.beacon
        let second = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 5, low: 5), major: 1, minor: 1)
        for time in stride(from: 0.0, through: 1, by: 0.1) { tracker.observe(Self.sighting(time, identity: first), into: &events) }
        tracker.advance(to: 10, into: &events)
        #expect(events.last?.kind == .exit && tracker.count == 0)
        // The second beacon is seen once a second for a minute and loses nothing: its timeout is
        // 3¼ intervals (loss taken as the 5 % floor: ⌈ln(0.5 / 3420) / ln 0.05⌉ = 3).
        for time in stride(from: 10.0, through: 70, by: 1) { tracker.observe(Self.sighting(time, identity: second), into: &events) }
        #expect(events.filter { $0.kind == .exit && $0.identity == second }.isEmpty)
        tracker.finish(into: &events)
        #expect(events.last?.identity == second)
        #expect(abs((events.last?.time ?? 0) - 73.25) < 0.01, "\(events.last?.time ?? -1)")
    }

    @Test func impossibleReadingsAreDroppedAndCountedButStillShowPresence() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        tracker.observe(Self.sighting(0, rssi: -60), into: &events)
        for (i, rssi) in [0, 5, -128, 127, nil].enumerated() {
            tracker.observe(Self.sighting(Double(i + 1) * 0.1, rssi: rssi), into: &events)
        }
        #expect(tracker.droppedReadings == 5)
        #expect(events.filter { $0.kind == .range }.count == 1)
        #expect(tracker.track(Self.beacon)?.lastSeen == 0.5)
        #expect(tracker.track(Self.beacon)?.filteredRSSI == -60)
    }

    @Test func tracksTenThousandBeaconsAndExpiresThemAll() {
        var tracker = ProximityTracker()
        var events: [ProximityEvent] = []
        for i in 0..<10_000 {
            let identity = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 7, low: 7), major: UInt16(i / 100), minor: UInt16(i % 100))
            tracker.observe(Self.sighting(Double(i) * 0.001, identity: identity), into: &events)
        }
        #expect(tracker.count == 10_000)
        tracker.finish(into: &events)
        #expect(tracker.count == 0)
        #expect(events.filter { $0.kind == .exit }.count == 10_000)
        let exitTimes = events.filter { $0.kind == .exit }.map(\.time)
        #expect(exitTimes == exitTimes.sorted(), "exits come out in time order")
    }
}
