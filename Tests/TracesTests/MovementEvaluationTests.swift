import BeaconFrames
import Ranging
import Testing
import Traces

/// What `eval --walks` measures: settling after a stop and zone changes while standing.
@Suite struct MovementEvaluationTests {
    static let beacon = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!

    static func range(_ time: Double, zone: Zone) -> ProximityEvent {
        ProximityEvent(kind: .range, time: time, identity: beacon, address: BluetoothAddress(0xC0, 0xFF, 0xEE, 0, 0, 1),
                       distance: 1, zone: zone)
    }

    @Test func settlingIsTheTimeFromTheStopToTheFirstEstimateThatStaysWithinThirtyPercent() {
        let estimates: [(time: Double, distance: Double?)] = [(9, 5), (10, 3), (11, 2.1), (12, 1.9), (13, 2.1), (14, 1.6)]
        // Truth 1.5 m: 1.95 m is the bound; 2.1 m at 13 s is the last estimate out of it.
        #expect(MovementEvaluation.settling(estimates, stop: 10, truth: 1.5) == 4)
        // Truth 2 m: only 3 m at the stop is out.
        #expect(MovementEvaluation.settling(estimates, stop: 10, truth: 2) == 1)
        #expect(MovementEvaluation.settling(estimates, stop: 11, truth: 2) == 0)
        #expect(MovementEvaluation.settling(estimates, stop: 10, truth: 1) == nil)
        #expect(MovementEvaluation.settling(estimates, stop: 20, truth: 1.5) == nil)
    }

    /// Changes in the first 30 s of a still run and in runs shorter than 60 s are not counted.
    @Test func stillSegmentsCountZoneChangesAfterTheSettlingAllowance() {
        var segments = StillSegments()
        // 0–90 s at 3 m: a change at 10 s (not counted), two at 50 s and 60 s.
        let zones: [(Double, Zone)] = [(0, .far), (10, .near), (40, .near), (50, .far), (60, .near), (90, .near)]
        for (time, zone) in zones { segments.add(Self.range(time, zone: zone), truth: 3) }
        // 101–140 s at 1 m: too short, its change is not counted.
        segments.add(Self.range(101, zone: .near), truth: 1)
        segments.add(Self.range(120, zone: .immediate), truth: 1)
        segments.add(Self.range(140, zone: .near), truth: 1)
        let count = segments.finish()
        #expect(count.changes == 2)
        #expect(count.seconds == 60)
    }

    /// A silence longer than 30 s ends a still run.
    @Test func aLongSilenceEndsTheRun() {
        var segments = StillSegments()
        for time in stride(from: 0.0, through: 50, by: 10) { segments.add(Self.range(time, zone: .near), truth: 2) }
        for time in stride(from: 90.0, through: 140, by: 10) { segments.add(Self.range(time, zone: .far), truth: 2) }
        #expect(segments.finish() == ZoneChangeCount())
    }

    /// The scenario itself: the walk stops 30 + 12.5 / 1.5 s in, and every seed gives a settling time.
    @Test func simulatesTheWalkOnEverySeed() {
        let result = MovementEvaluation.simulate(configuration: RangingConfiguration(), interval: 1, seeds: [1, 2])
        #expect(abs(MovementEvaluation.stopTime - 38.333) < 0.001)
        #expect(result.settling.count == 2 && result.settling.allSatisfy { $0 != nil })
        // Two seeds of 90 s after the walk and 4 × 570 s of still beacons.
        #expect(abs(result.standing.seconds - 2 * (90 + 4 * 570)) < 2 * 5 * 1.5)
    }
}
