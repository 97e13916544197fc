import BeaconFrames
import Foundation
import Ranging
import Testing
import Traces
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct IntervalCoverageTests {
    /// Still beacons at random distances, each with its own lasting shadowing offset drawn with
    /// a known standard deviation, plus per-packet fading: with the interval's shadowing set to
    /// that deviation and the exponent known, about 68 % of range events hold the truth.
    @Test(arguments: [(6.0, 21 as UInt64), (4.0, 22), (8.0, 23)])
    func intervalHoldsTheTruthAboutTwoThirdsOfTheTime(shadowing: Double, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var beacons: [WalkScript.Beacon] = []
        for index in 0..<600 {
            let distance = 0.5 + random.nextDouble() * 9.5
            beacons.append(.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/\(index / 100 + 1)/\(index % 100 + 1)",
                                 interval: 0.5, waypoints: [[0, distance], [20, distance]]))
        }
        let parameters = SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 4, siteShadowing: shadowing,
                                              packetLoss: 0.1, sensitivity: -127, seed: seed)
        let records = Simulator.run(WalkScript(beacons: beacons), parameters: parameters).records
        var configuration = RangingConfiguration(uncertainty: RangingUncertainty(shadowing: shadowing, exponentSpread: 0))
        configuration.rangeInterval = 0
        let (events, _) = Replay.run(records, configuration: configuration)
        var evaluation = Evaluation()
        for (event, truth) in events { evaluation.add(event, truth: truth) }
        let coverage = try #require(evaluation.report().intervalCoverage)
        #expect(abs(coverage - 0.68) <= 0.05, "coverage \(coverage)")
        // Without the lasting offset the same interval is far too wide: the shadowing term is
        // what the coverage rests on.
        let still = Simulator.run(WalkScript(beacons: beacons), parameters: SimulationParameters(
            pathLossExponent: 2.8, shadowingSigma: 4, packetLoss: 0.1, sensitivity: -127, seed: seed)).records
        var wide = Evaluation()
        for (event, truth) in Replay.run(still, configuration: configuration).events { wide.add(event, truth: truth) }
        #expect((wide.report().intervalCoverage ?? 0) > 0.9)
    }

    /// The interval widens with the exponent's uncertainty away from 1 m and with the filter's
    /// uncertainty right after a beacon appears.
    @Test func intervalGrowsWithEachSourceOfUncertainty() throws {
        let model = DistanceModel.logDistance(exponent: 2.8)
        let uncertainty = RangingUncertainty(shadowing: 4, exponentSpread: 0.5)
        let atOneMetre = uncertainty.spread(rssi: -59, measuredPower: -59, model: model, filterVariance: 0)
        #expect(abs(atOneMetre - 4) < 1e-9)
        let far = uncertainty.spread(rssi: -89, measuredPower: -59, model: model, filterVariance: 0)
        #expect(abs(far - (16 + (30 * 0.5 / 2.8) * (30 * 0.5 / 2.8)).squareRoot()) < 1e-9)
        #expect(uncertainty.spread(rssi: -59, measuredPower: -59, model: model, filterVariance: 9) == 5)
        let interval = try #require(model.interval(rssi: -59, measuredPower: -59, spread: 4))
        // d · 10^(∓4 / 28) around 1 m.
        #expect(abs(interval.lowerBound - pow(10, -4.0 / 28)) < 1e-9 && abs(interval.upperBound - pow(10, 4.0 / 28)) < 1e-9)
        var filter = RSSIFilter(.defaultKalman)
        _ = filter.update(-60, at: 0)
        let early = filter.estimateVariance(readingVariance: 32)
        for step in 1...100 { _ = filter.update(-60, at: Double(step) * 0.1) }
        #expect(filter.estimateVariance(readingVariance: 32) < early / 4)
    }
    /// With the default (fitted) spread, a beacon standing at 4 m gets an interval that reaches
    /// farther than nearer (in ratio to the estimate), as the recordings' errors do; the
    /// symmetric spread gives equal ratios.
    @Test func fittedIntervalReachesFartherThanNearerAtRange() throws {
        let script = WalkScript(beacons: [.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", interval: 0.5,
                                                waypoints: [[0, 4], [60, 4]])])
        let records = Simulator.run(script, parameters: SimulationParameters(pathLossExponent: 2.8, seed: 5)).records
        for (uncertainty, lopsided) in [(RangingUncertainty(), true), (RangingUncertainty(shadowing: 6), false)] {
            var configuration = RangingConfiguration(uncertainty: uncertainty)
            configuration.rangeInterval = 0
            let last = try #require(Replay.run(records, configuration: configuration).events.last { $0.0.kind == .range }?.0)
            let distance = try #require(last.distance), interval = try #require(last.distanceInterval)
            let farther = interval.upperBound / distance, nearer = distance / interval.lowerBound
            if lopsided {
                #expect(farther > 2 * nearer, "\(interval) around \(distance)")
            } else {
                #expect(abs(farther - nearer) < 1e-6, "\(interval) around \(distance)")
            }
        }
    }
}

@Suite struct PooledEvaluationTests {
    static let beacon = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1")!
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!

    static func range(_ distance: Double, _ interval: ClosedRange<Double>? = nil, zone: Zone) -> ProximityEvent {
        ProximityEvent(kind: .range, time: 0, identity: beacon, address: address, rssi: -60, filteredRSSI: -60,
                       distance: distance, distanceInterval: interval, zone: zone)
    }

    @Test func familyIsTheFileNameUpToTheFirstDash() {
        #expect(PooledEvaluation.family(ofFile: "/data/traces/elanfer-bus-measurement-pi.jsonl") == "elanfer")
        #expect(PooledEvaluation.family(ofFile: "nist-rpi3-a.jsonl") == "nist")
        #expect(PooledEvaluation.family(ofFile: "walk.jsonl") == "walk")
    }

    /// Family "a" (two files) meets every goal but coverage, "b" none; also the rows of
    /// ``FamilyTableTests``.
    static func twoFamilies() -> PooledEvaluation {
        var pooled = PooledEvaluation()
        // Family "a": truths 1 and 2 m. Nearplay's errors 0.1, 0.3 (file 1) and 0.2 (file 2): median 0.2.
        pooled.add([(Self.range(1.1, 0.8...1.5, zone: .near), 1), (Self.range(1.7, 1.8...2.5, zone: .near), 2)], model: .nearplay, family: "a")
        pooled.add([(Self.range(2.2, 1.5...3, zone: .near), 2)], model: .nearplay, family: "a")
        // Curve errors 0.4, 0.5, 0.6 (median 0.5); n=2 errors 0.2, 0.3, 0.3 (median 0.3).
        pooled.add([(Self.range(1.4, zone: .near), 1), (Self.range(2.5, zone: .near), 2)], model: .altBeacon, family: "a")
        pooled.add([(Self.range(2.6, zone: .near), 2)], model: .altBeacon, family: "a")
        pooled.add([(Self.range(0.8, zone: .near), 1), (Self.range(2.3, zone: .near), 2), (Self.range(1.7, zone: .near), 2)],
                   model: .logDistance2, family: "a")
        // Family "b": Nearplay worse than n=2, in the wrong zone.
        pooled.add([(Self.range(5, 1...2, zone: .far), 1)], model: .nearplay, family: "b")
        pooled.add([(Self.range(2, zone: .near), 1)], model: .altBeacon, family: "b")
        pooled.add([(Self.range(1.5, zone: .near), 1)], model: .logDistance2, family: "b")
        return pooled
    }

    /// Two files of one family pool into one median over all their events; the ratio, the
    /// coverage and the verdict follow from the pooled figures.
    @Test func poolsEventsAcrossFilesAndJudgesTheGoals() throws {
        let rows = Self.twoFamilies().rows()
        #expect(rows.map(\.family) == ["a", "b"])
        let a = rows[0]
        #expect(a.files == 2 && a.nearplay.rangeEventsWithTruth == 3)
        #expect(abs((a.nearplay.medianAbsoluteError ?? 0) - 0.2) < 1e-9)
        #expect(abs((a.altBeacon.medianAbsoluteError ?? 0) - 0.5) < 1e-9)
        #expect(abs((a.logDistance.medianAbsoluteError ?? 0) - 0.3) < 1e-9)
        #expect(abs((a.ratioToCurve ?? 0) - 0.4) < 1e-9)
        // Intervals 0.8–1.5 ∋ 1, 1.8–2.5 ∋ 2, 1.5–3 ∋ 2: all three.
        #expect(a.nearplay.intervalCoverage == 1)
        #expect(a.nearplay.zoneAccuracy == 1)
        let goals = EvaluationGoals()
        #expect(goals.verdict(a) == FamilyVerdict(belowBothBaselines: true, withinRatioOfCurve: true, zoneAccuracy: true, coverage: false))
        let b = rows[1]
        #expect(b.nearplay.intervalCoverage == 1 && b.nearplay.zoneAccuracy == 0)
        #expect(goals.verdict(b) == FamilyVerdict(belowBothBaselines: false, withinRatioOfCurve: false, zoneAccuracy: false, coverage: false))
    }
}

@Suite struct EvaluationPlotTests {
    /// Points of every `<polyline>` in an SVG, by its `data-series`, and the plot's scale.
    final class SeriesReader: NSObject, XMLParserDelegate {
        var series: [String: [(x: Double, y: Double)]] = [:]
        var scale: [String: Double] = [:]
        var zones: [String] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if name == "g", attributes["id"] == "plot" {
                for key in ["data-left", "data-top", "data-width", "data-height", "data-x-max", "data-y-max"] {
                    scale[key] = attributes[key].flatMap(Double.init)
                }
            }
            if name == "rect", let zone = attributes["data-zone"] { zones.append(zone) }
            guard name == "polyline", let id = attributes["data-series"], let points = attributes["points"] else { return }
            series[id] = points.split(separator: " ").map { pair in
                let xy = pair.split(separator: ",").compactMap { Double($0) }
                return (xy[0], xy[1])
            }
        }
    }

    /// The plot of a simulated walk: its Nearplay and truth series are the replay's range events,
    /// mapped through the scale the SVG declares.
    @Test func seriesMatchTheEvents() throws {
        let script = WalkScript(beacons: [.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", interval: 0.5,
                                                waypoints: [[0, 1], [30, 3], [45, 0.4]])])
        let records = Simulator.run(script, parameters: SimulationParameters(seed: 9)).records
        let (events, _) = Replay.run(records, configuration: EvaluatedModel.nearplay.configuration(ours: RangingConfiguration()))
        let ranges = events.filter { $0.0.kind == .range && $0.0.distance != nil }
        var plot = EvaluationPlot(title: "walk <test>")
        plot.estimates = ranges.map { ($0.0.time, $0.0.distance!, $0.0.distanceInterval) }
        plot.truth = ranges.map { EvaluationPlot.Point(time: $0.0.time, distance: $0.1!) }
        let svg = plot.svg()
        #expect(svg.contains("walk &lt;test&gt;"))

        let reader = SeriesReader()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        #expect(parser.parse(), "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        #expect(reader.zones == ["immediate", "near", "far"])
        let left = try #require(reader.scale["data-left"]), top = try #require(reader.scale["data-top"])
        let width = try #require(reader.scale["data-width"]), height = try #require(reader.scale["data-height"])
        let xMax = try #require(reader.scale["data-x-max"]), yMax = try #require(reader.scale["data-y-max"])
        let positions = EvaluationPlot.timeline(ranges.map(\.0.time))
        for (name, values) in [("nearplay", ranges.map { $0.0.distance! }), ("truth", ranges.map { $0.1! })] {
            let points = try #require(reader.series[name])
            #expect(points.count == ranges.count)
            for (index, point) in points.enumerated() {
                let seconds = (point.x - left) / width * xMax
                let metres = (top + height - point.y) / height * yMax
                #expect(abs(seconds - positions[index]) < 0.05)
                #expect(abs(metres - min(yMax, values[index])) < 0.02, "\(name) point \(index): \(metres) m against \(values[index]) m")
            }
        }
        #expect(reader.series["truth"]?.map(\.y).contains { abs($0 - (top + height - 3 / yMax * height)) < 0.05 } == true)
    }

    @Test func longSilencesAreShortened() {
        #expect(EvaluationPlot.timeline([0, 1, 2, 5000, 5001]) == [0, 1, 2, 32, 33])
    }

    @Test func theTimeAxisReadsAsDurations() {
        #expect([45, 119.4, 120, 754, 7199, 7200, 9000, 69_447].map(EvaluationPlot.duration)
                == ["45 s", "119 s", "2 min", "12 min", "119 min", "2 h", "2 h 30 min", "19 h 17 min"])
        // A 19-hour plot gets ticks every 3 hours: seven of them, 0 to 18 h.
        var plot = EvaluationPlot(title: "long")
        plot.truth = stride(from: 0.0, through: 69_447, by: 20).map { .init(time: $0, distance: 1) }
        let svg = plot.svg()
        let ticks = svg.matches(of: /text-anchor="middle" fill="#555">([^<]+)</).map { String($0.1) }
        #expect(ticks == ["0 s", "3 h", "6 h", "9 h", "12 h", "15 h", "18 h"], "\(ticks)")
        #expect(svg.contains("19 h 17 min shown"))
    }
}
