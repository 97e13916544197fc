import BeaconFrames
import Ranging
import Testing
import Traces

@Suite struct SimulationAndEvaluationTests {
    static let still = WalkScript(beacons: [
        .init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", measuredPower: -59, interval: 0.1, waypoints: [[0, 2], [120, 2]]),
    ])

    @Test func sameSeedSameTraceOtherSeedOtherTrace() {
        let a = Simulator.run(WalkScript.demo, parameters: SimulationParameters(seed: 5)).records
        let b = Simulator.run(WalkScript.demo, parameters: SimulationParameters(seed: 5)).records
        let c = Simulator.run(WalkScript.demo, parameters: SimulationParameters(seed: 6)).records
        #expect(a == b)
        #expect(a != c)
        let times = a.map(\.advertisement.time)
        #expect(times == times.sorted())
    }

    @Test func simulatedAirFollowsTheScript() throws {
        let parameters = SimulationParameters(pathLossExponent: 2, shadowingSigma: 0, packetLoss: 0.3, jitter: 0, seed: 1)
        let (records, presence) = Simulator.run(Self.still, parameters: parameters)
        #expect(presence == [PresenceWindow(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", start: 0, end: 120)])
        // 1201 transmissions, 30 % lost.
        #expect(abs(Double(records.count) / 1201 - 0.7) < 0.04)
        // No shadowing: exactly -59 - 20 log10(2) = -65 dBm.
        #expect(Set(records.map(\.advertisement.rssi)) == [-65])
        #expect(records.allSatisfy { $0.truthDistance == 2 })
        let sighting = try #require(Sighting(records[0].advertisement))
        #expect(sighting.measuredPower == -59)
    }

    @Test(arguments: [
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1",
        "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/9/9",
        "eddystone:00112233445566778899/AABBCCDDEEFF",
    ])
    func simulatesEveryIdentityKind(identity: String) throws {
        let beacon = try #require(BeaconIdentity(identity))
        let sighting = try #require(Sighting(Advertisement(time: 0, address: BluetoothAddress("C0:FF:EE:00:00:01")!, rssi: -60,
                                                           data: Simulator.advertisingData(identity: beacon, measuredPower: -61))))
        #expect(sighting.identity == beacon)
        #expect(sighting.measuredPower == -61)
    }

    static func evaluate(_ script: WalkScript, _ parameters: SimulationParameters) -> EvaluationReport {
        let (records, presence) = Simulator.run(script, parameters: parameters)
        let (events, summary) = Replay.run(records, configuration: RangingConfiguration())
        #expect(summary.sightings == records.count)
        var evaluation = Evaluation()
        for (event, truth) in events { evaluation.add(event, truth: truth) }
        return evaluation.report(presence: presence)
    }

    /// A 100 ms beacon standing at 2 m in a room whose exponent matches the default model, 4 dB
    /// shadowing, a third of the packets lost: accurate, no false exit, exit within 2.5 s.
    @Test func stillBeaconWithLossMeetsTheTargets() throws {
        let report = Self.evaluate(Self.still, SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 4, packetLoss: 1.0 / 3, seed: 11))
        #expect((report.medianAbsoluteError ?? 99) < 0.3, "median error \(report.medianAbsoluteError ?? -1) m")
        #expect((report.zoneAccuracy ?? 0) > 0.95, "zone accuracy \(report.zoneAccuracy ?? -1)")
        let presence = try #require(report.presence)
        #expect(presence.falseExits == 0)
        #expect((presence.maxEnterLatency ?? 99) < 0.5)
        #expect((presence.maxExitLatency ?? 99) < 2.5, "exit latency \(presence.maxExitLatency ?? -1) s")
    }

    /// The demo walk (to 0.3 m and back, a beacon switched off, one far away coming closer) with
    /// a third lost: every beacon enters and exits once, none falsely.
    @Test func demoWalkWithLossEntersAndExitsEachBeaconOnce() throws {
        let report = Self.evaluate(WalkScript.demo, SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 4, packetLoss: 1.0 / 3, seed: 11))
        let presence = try #require(report.presence)
        #expect(presence.falseExits == 0)
        #expect(presence.missedWindows == 0)
        #expect(report.enters == 3 && report.exits == 3)
        // The slowest beacon advertises every 500 ms from 12 m away, where some packets also fall
        // below the receiver's sensitivity: its first one heard may come a second or so late.
        #expect((presence.maxEnterLatency ?? 99) < 2.0)
        // The slowest beacon advertises every 500 ms: its timeout is about 12 × 0.75 s.
        #expect((presence.maxExitLatency ?? 99) < 10, "exit latency \(presence.maxExitLatency ?? -1) s")
        // Distances reach 12 m, where 4 dB of shadowing alone is ±3 m.
        #expect((report.medianAbsoluteError ?? 99) < 1.5)
    }

    /// A beacon with two presence windows: each window's latency is measured against its own
    /// enter and exit, not the next window's.
    @Test func presenceMetricsKeepEachWindowToItself() {
        let beacon = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!
        let address = BluetoothAddress("C0:FF:EE:00:00:01")!
        var evaluation = Evaluation()
        for (kind, time) in [(ProximityEvent.Kind.enter, 0.5), (.exit, 12), (.enter, 20.5), (.exit, 32)] {
            evaluation.add(ProximityEvent(kind: kind, time: time, identity: beacon, address: address), truth: nil)
        }
        let report = evaluation.report(presence: [PresenceWindow(beacon: beacon.description, start: 0, end: 10),
                                                  PresenceWindow(beacon: beacon.description, start: 20, end: 30)])
        #expect(report.presence?.maxExitLatency == 2)
        #expect(report.presence?.maxEnterLatency == 0.5)
        #expect(report.presence?.falseExits == 0)
    }

    @Test func scriptsThatWouldNeverEndAreRefused() {
        var script = Self.still
        script.beacons[0].waypoints = [[1e17, 1], [2e17, 1]]
        #expect(script.problem()?.contains("between 0 and") == true)
        script.beacons[0].interval = 0.05
        script.beacons[0].waypoints = [[0, 1], [600_000, 1]]
        #expect(script.problem()?.contains("more than") == true)
        script.beacons[0].waypoints = [[0, 1], [10, 1]]
        script.beacons[0].address = "C0:FF:EE"
        #expect(script.problem()?.contains("\"address\"") == true)
        // The simulator itself stays bounded for callers that skip the check.
        script.beacons[0].address = nil
        script.beacons[0].waypoints = [[1e17, 1], [2e17, 1]]
        #expect(Simulator.run(script, parameters: SimulationParameters()).records.isEmpty)
    }

    @Test func metricsOnKnownEvents() {
        let beacon = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!
        let address = BluetoothAddress("C0:FF:EE:00:00:01")!
        var evaluation = Evaluation()
        func range(_ t: Double, _ d: Double, _ zone: Zone) -> ProximityEvent {
            ProximityEvent(kind: .range, time: t, identity: beacon, address: address, rssi: -60, filteredRSSI: -60, distance: d, zone: zone)
        }
        evaluation.add(ProximityEvent(kind: .enter, time: 1, identity: beacon, address: address), truth: nil)
        evaluation.add(range(1, 1.5, .near), truth: 1.0)   // error 0.5, zone right
        evaluation.add(range(2, 4.0, .far), truth: 2.0)    // error 2.0, zone wrong
        evaluation.add(range(3, 2.0, .near), truth: 2.1)   // error 0.1, zone right
        evaluation.add(ProximityEvent(kind: .exit, time: 5, identity: beacon, address: address), truth: nil)
        evaluation.add(ProximityEvent(kind: .enter, time: 6, identity: beacon, address: address), truth: nil)
        evaluation.add(ProximityEvent(kind: .exit, time: 12, identity: beacon, address: address), truth: nil)
        let report = evaluation.report(presence: [PresenceWindow(beacon: beacon.description, start: 0.5, end: 10)])
        #expect(report.medianAbsoluteError == 0.5)
        #expect(abs((report.meanAbsoluteError ?? 0) - 2.6 / 3) < 1e-9)
        #expect(abs((report.zoneAccuracy ?? 0) - 2.0 / 3) < 1e-9)
        #expect(report.bands[1].count == 1 && report.bands[2].count == 2)
        #expect(report.presence?.falseExits == 1)
        #expect(report.presence?.meanEnterLatency == 0.5)
        #expect(report.presence?.meanExitLatency == 2)
    }
}
