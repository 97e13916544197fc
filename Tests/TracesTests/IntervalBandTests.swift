import BeaconFrames
import Ranging
import Testing
import Traces

@Suite struct IntervalBandTests {
    /// Range events land in the band of their true distance; coverage and the median width
    /// ratio are per band, pooled over families, and the table prints only bands with events.
    @Test func coverageAndWidthArePerBandOfTrueDistance() throws {
        var pooled = PooledEvaluation()
        let range = PooledEvaluationTests.range
        // Family "a": 0.5 m held (ratio 2), 1.6 m missed (ratio 1.5), 1.8 m held (ratio 2.5).
        pooled.add([(range(0.5, 0.3...0.6, .near), 0.5), (range(1.2, 1...1.5, .near), 1.6),
                    (range(1.7, 1...2.5, .near), 1.8)], model: .nearplay, family: "a")
        // Family "b": 20 m held (ratio 4), and a baseline's event, which does not count.
        pooled.add([(range(9, 5...20, .far), 20)], model: .nearplay, family: "b")
        pooled.add([(range(1.5, 1...2, .near), 1.5)], model: .altBeacon, family: "b")
        let (all, families) = pooled.intervalBands()
        #expect(all.map(\.count) == [1, 2, 0, 0, 0, 1])
        #expect(all.map(\.hits) == [1, 1, 0, 0, 0, 1])
        #expect(all[1].coverage == 0.5)
        #expect(all[1].medianWidthRatio == 2)
        #expect(all.map(\.label) == ["<1 m", "1–2 m", "2–4 m", "4–8 m", "8–16 m", "≥16 m"])
        #expect(families.map(\.family) == ["a", "b"] && families[1].bands[5].count == 1)
        #expect(IntervalBand.index(truth: 2) == 2 && IntervalBand.index(truth: 16) == 5)
    }

    /// The table `eval` prints after the family table.
    @Test func tablePrintsBandsWithEvents() {
        var run = EvaluationRun(configuration: RangingConfiguration())
        let script = WalkScript(beacons: [.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", interval: 0.5,
                                                waypoints: [[0, 1.5], [60, 1.5]])])
        let records = Simulator.run(script, parameters: SimulationParameters(seed: 4)).records
        _ = run.add(records, title: "still", family: "still")
        let lines = run.intervalBandLines()
        #expect(lines[2] == "| band | ranges | coverage | median hi/lo | still |")
        #expect(lines[3] == "|---|---:|---:|---:|---:|")
        #expect(lines.count == 5 && lines[4].hasPrefix("| 1–2 m | "), "\(lines)")
    }
}
