import BeaconFrames
import Foundation
import Ranging
import Testing
import Traces

/// `nearplay eval`'s driver: every model on every recording, the calibrated Nearplay, the pools
/// and the table, without the terminal.
@Suite struct EvaluationRunTests {
    /// A beacon held 30 s at 1 m, then 30 s at 3 m: two distances a two-point calibration can use.
    static let twoSpots = WalkScript(beacons: [
        .init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", interval: 0.2, waypoints: [[0, 1], [30, 1], [30.001, 3], [60, 3]]),
    ])

    static func records(_ script: WalkScript = twoSpots, seed: UInt64 = 3) -> [TraceRecord] {
        Simulator.run(script, parameters: SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 3, packetLoss: 0.1, seed: seed)).records
    }

    static func report(_ records: [TraceRecord], _ configuration: RangingConfiguration) -> EvaluationReport {
        var evaluation = Evaluation(zones: configuration.zones)
        for (event, truth) in Replay.run(records, configuration: configuration).events { evaluation.add(event, truth: truth) }
        return evaluation.report()
    }

    @Test func scoresEveryModelOnTheRecordingAndPoolsIt() throws {
        let records = Self.records()
        var run = EvaluationRun(configuration: RangingConfiguration(), reportsPerRecording: true, plots: true)
        let added = run.add(records, title: "walk.jsonl", family: "walk")
        let recording = try #require(added)
        #expect(recording.reports.map(\.model) == ["nearplay", "altbeacon", "log-distance-n2"])
        for (report, model) in zip(recording.reports, EvaluatedModel.allCases) {
            #expect(report.report == Self.report(records, model.configuration(ours: RangingConfiguration())), "\(model)")
        }
        #expect(recording.profile == nil && recording.calibrationRefused == nil)
        let rows = run.pooled.rows()
        #expect(rows.map(\.family) == ["walk"] && rows[0].files == 1)
        #expect(rows[0].nearplay == recording.reports[0].report)
        #expect(run.calibratedPool.rows().isEmpty)
        let plot = try #require(recording.plot)
        #expect(plot.title == "walk.jsonl" && !plot.estimates.isEmpty && plot.truth.count == plot.estimates.count)
        #expect(plot.baselines.map(\.name) == ["AltBeacon curve", "log-distance n=2"])
        #expect(run.table().calibrated == nil)
    }

    /// The line `eval --json` prints: the file name as JSONEncoder writes it, then the report.
    @Test func jsonLineNamesTheFileAndTheModel() throws {
        var run = EvaluationRun(configuration: RangingConfiguration(), reportsPerRecording: true)
        let added = run.add(Self.records(), title: "walk.jsonl", family: "walk")
        let recording = try #require(added)
        let line = try recording.reports[1].jsonLine(file: "traces/walk.jsonl")
        #expect(line.hasPrefix(#"{"file":"traces\/walk.jsonl","model":"altbeacon","report":{"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let report = try #require(object["report"] as? [String: Any])
        #expect(report["rangeEvents"] as? Int == recording.reports[1].report.rangeEvents)
    }

    /// With `each`, every model is scored on what the two-point calibration left out, and the
    /// calibrated Nearplay on the same records with the recording's own profile.
    @Test func calibratesEachRecordingOnTheFirstHalfOfTwoDistances() throws {
        let records = Self.records()
        var run = EvaluationRun(configuration: RangingConfiguration(), calibration: .eachRecording(spotShadowing: 6), reportsPerRecording: true)
        let added = run.add(records, title: "walk.jsonl", family: "walk")
        let recording = try #require(added)
        let split = CalibrationSplit(records)
        let profile = try #require(recording.profile)
        #expect(profile == (try EvaluationRun.profile(fittedOn: split.calibration, spotShadowing: 6)))
        #expect(profile.distances == [1, 3])
        #expect(recording.reports.map(\.model) == ["nearplay", "altbeacon", "log-distance-n2", "nearplay-calibrated"])
        let nearplay = EvaluatedModel.nearplay.configuration(ours: RangingConfiguration())
        #expect(recording.reports[0].report == Self.report(split.rest, nearplay))
        #expect(recording.reports[3].report == Self.report(split.rest, profile.applied(to: nearplay)))
        #expect(run.calibratedPool.rows()[0].nearplay == recording.reports[3].report)
        let table = run.table()
        #expect(table.calibrated?["walk"] == recording.reports[3].report)
        #expect(table.lines()[0].hasSuffix("| calibrated Nearplay | calibrated zone | calibrated coverage |"))
    }

    /// A recording held at one distance cannot calibrate itself: it is scored whole and
    /// uncalibrated, and says why.
    @Test func aRecordingThatCannotCalibrateItselfIsScoredUncalibrated() throws {
        let still = WalkScript(beacons: [.init(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", interval: 0.2, waypoints: [[0, 2], [30, 2]])])
        let records = Self.records(still)
        var run = EvaluationRun(configuration: RangingConfiguration(), calibration: .eachRecording(spotShadowing: 6), reportsPerRecording: true)
        let added = run.add(records, title: "still.jsonl", family: "still")
        let recording = try #require(added)
        #expect(recording.profile == nil)
        #expect(recording.calibrationRefused == .tooFewDistances([2]))
        #expect(recording.reports[3].report == recording.reports[0].report)
        #expect(recording.reports[0].report == Self.report(records, EvaluatedModel.nearplay.configuration(ours: RangingConfiguration())))
    }

    /// One profile for all (`--calibrate-from FILE`) is applied to every recording, which is scored whole.
    @Test func aFixedProfileCalibratesEveryRecording() throws {
        let records = Self.records()
        let profile = RangingProfile(rssiOffset: -4, exponent: 2.2)
        var run = EvaluationRun(configuration: RangingConfiguration(), calibration: .profile(profile), reportsPerRecording: true)
        let added = run.add(records, title: "walk.jsonl", family: "walk")
        let recording = try #require(added)
        #expect(recording.profile == nil)
        let nearplay = EvaluatedModel.nearplay.configuration(ours: RangingConfiguration())
        #expect(recording.reports[0].report == Self.report(records, nearplay))
        #expect(recording.reports[3].report == Self.report(records, profile.applied(to: nearplay)))
        #expect(recording.reports[3].report != recording.reports[0].report)
    }

    @Test func aRecordingWithoutTruthIsNotEvaluated() {
        let records = Self.records().map { TraceRecord(advertisement: $0.advertisement, line: $0.line) }
        var run = EvaluationRun(configuration: RangingConfiguration(), calibration: .eachRecording(spotShadowing: 6))
        #expect(run.add(records, title: "walk.jsonl", family: "walk") == nil)
        #expect(run.pooled.rows().isEmpty && run.calibratedPool.rows().isEmpty)
    }
}

@Suite struct FamilyTableTests {
    /// Family "a" meets every goal but coverage, "b" none.
    static func rows() -> [FamilyRow] { PooledEvaluationTests.twoFamilies().rows() }

    @Test func printsOneRowPerFamilyAndWhichGoalsHoldWhere() {
        #expect(FamilyTable(rows: Self.rows()).lines() == [
            "| family | files | ranges | Nearplay | AltBeacon curve | log-distance n=2 | × curve | zone (Nearplay / curve / n=2) | interval coverage |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|",
            "| a | 2 | 3 | 0.20 m | 0.50 m | 0.30 m | 0.40 | 100 % / 100 % / 100 % | 100 % |",
            "| b | 1 | 1 | 4.00 m | 1.00 m | 0.50 m | 4.00 | 0 % / 100 % / 100 % | 100 % |",
            "",
            "Goals (2 families):",
            "- median error below both baselines: holds on a (not on b)",
            "- median error at most 0.75× the AltBeacon curve's: holds on a (not on b)",
            "- zone accuracy at least 85 %: holds on a (not on b)",
            "- interval coverage within 68 ± 5 %: holds on no family",
            "  (averaged over the 2 families, each weighted alike, the interval holds the truth 100 % of the time)",
        ])
    }

    /// Calibrated columns when a calibration was asked for ("-" for a family without figures);
    /// no average over a single family.
    @Test func addsTheCalibratedColumnsAndSaysEveryFamilyForOne() {
        let rows = Self.rows()
        let lines = FamilyTable(rows: [rows[0]], calibrated: ["a": rows[1].nearplay, "c": rows[0].nearplay]).lines()
        #expect(lines[0].hasSuffix("| interval coverage | calibrated Nearplay | calibrated zone | calibrated coverage |"))
        #expect(lines[1] == "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        #expect(lines[2] == "| a | 2 | 3 | 0.20 m | 0.50 m | 0.30 m | 0.40 | 100 % / 100 % / 100 % | 100 % | 4.00 m | 0 % | 100 % |")
        #expect(lines[4] == "Goals (1 family):")
        #expect(lines[5] == "- median error below both baselines: holds on every family")
        #expect(lines.count == 9)
        let missing = FamilyTable(rows: [rows[1]], calibrated: [:]).lines()
        #expect(missing[2].hasSuffix("| 100 % | - | - | - |"))
    }
}
