import Foundation
import Ranging

/// The models `nearplay eval` compares: Nearplay's as configured, and two baselines on
/// AltBeacon's 20 s trimmed running average (10 % trimmed at each end).
public enum EvaluatedModel: String, Sendable, Hashable, CaseIterable {
    case nearplay
    /// The AltBeacon library's Nexus 5 curve.
    case altBeacon = "altbeacon"
    /// Plain log-distance with the free-space exponent.
    case logDistance2 = "log-distance-n2"

    /// The baselines report a zone as soon as their hysteresis does, as AltBeacon's ranging would.
    static let baselineZones = ZoneBoundaries(dwell: 0)

    /// The configuration this model replays with; presence as in `ours`, a range event at
    /// every sighting.
    public func configuration(ours: RangingConfiguration) -> RangingConfiguration {
        var configuration: RangingConfiguration
        switch self {
        case .nearplay:
            configuration = ours
        case .altBeacon:
            configuration = RangingConfiguration(filter: .altBeaconRunningAverage, distanceModel: .altBeaconCurve(.nexus5),
                                                 zones: Self.baselineZones, presence: ours.presence)
        case .logDistance2:
            configuration = RangingConfiguration(filter: .altBeaconRunningAverage, distanceModel: .logDistance(exponent: 2),
                                                 zones: Self.baselineZones, presence: ours.presence)
        }
        configuration.rangeInterval = 0
        return configuration
    }
}

/// What the ranging should reach on every family of recordings (issue 13).
public struct EvaluationGoals: Sendable, Hashable {
    /// Nearplay's median error at most this fraction of the AltBeacon curve's.
    public var medianRatioToCurve = 0.75
    public var zoneAccuracy = 0.85
    /// Interval coverage within `coverage ± coverageTolerance`.
    public var coverage = 0.68
    public var coverageTolerance = 0.05

    public init() {}

    /// Which goals one family's figures meet.
    public func verdict(_ row: FamilyRow) -> FamilyVerdict {
        let ours = row.nearplay.medianAbsoluteError, curve = row.altBeacon.medianAbsoluteError
        let plain = row.logDistance.medianAbsoluteError
        var verdict = FamilyVerdict()
        if let ours, let curve, let plain {
            verdict.belowBothBaselines = ours < curve && ours < plain
            verdict.withinRatioOfCurve = ours <= medianRatioToCurve * curve
        }
        verdict.zoneAccuracy = row.nearplay.zoneAccuracy.map { $0 >= zoneAccuracy } ?? false
        verdict.coverage = row.nearplay.intervalCoverage.map { abs($0 - coverage) <= coverageTolerance } ?? false
        return verdict
    }
}

/// The goals one family meets.
public struct FamilyVerdict: Sendable, Hashable, Codable {
    public var belowBothBaselines = false
    public var withinRatioOfCurve = false
    public var zoneAccuracy = false
    public var coverage = false

    public init(belowBothBaselines: Bool = false, withinRatioOfCurve: Bool = false, zoneAccuracy: Bool = false, coverage: Bool = false) {
        self.belowBothBaselines = belowBothBaselines
        self.withinRatioOfCurve = withinRatioOfCurve
        self.zoneAccuracy = zoneAccuracy
        self.coverage = coverage
    }
}

/// One family's pooled figures: every range event of every recording in it, per model.
public struct FamilyRow: Sendable, Hashable {
    public var family: String
    public var files: Int
    public var nearplay: EvaluationReport
    public var altBeacon: EvaluationReport
    public var logDistance: EvaluationReport

    /// Nearplay's median error over the AltBeacon curve's.
    public var ratioToCurve: Double? {
        guard let ours = nearplay.medianAbsoluteError, let curve = altBeacon.medianAbsoluteError, curve > 0 else { return nil }
        return ours / curve
    }
}

/// Range events pooled by family of recordings: a family's median is over all its events, so a
/// recording with more readings weighs more, as the table does.
public struct PooledEvaluation: Sendable {
    private var families: [String] = []
    private var files: [String: Int] = [:]
    private var evaluations: [String: [EvaluatedModel: Evaluation]] = [:]
    private let zones: ZoneBoundaries

    public init(zones: ZoneBoundaries = ZoneBoundaries()) { self.zones = zones }

    /// A recording's family: its file name up to the first `-` (without the extension).
    public static func family(ofFile path: String) -> String {
        let name = (path as NSString).lastPathComponent
        let stem = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
        return stem.split(separator: "-", maxSplits: 1).first.map(String.init) ?? stem
    }

    /// Adds one recording's replay under `model` to `family`.
    public mutating func add(_ events: [(ProximityEvent, Double?)], model: EvaluatedModel, family: String) {
        if evaluations[family] == nil {
            families.append(family)
            evaluations[family] = [:]
        }
        if model == .nearplay { files[family, default: 0] += 1 }
        var evaluation = evaluations[family]?[model] ?? Evaluation(zones: zones)
        for (event, truth) in events { evaluation.add(event, truth: truth) }
        evaluations[family]?[model] = evaluation
    }

    /// Nearplay's interval per distance band (``IntervalBand``): pooled over all families, and
    /// per family in the order families were first added.
    public func intervalBands() -> (all: [IntervalBand], families: [(family: String, bands: [IntervalBand])]) {
        var all = IntervalBand.empty
        let perFamily = families.map { family in
            let bands = evaluations[family]?[.nearplay]?.intervalBands ?? IntervalBand.empty
            for index in all.indices { all[index].merge(bands[index]) }
            return (family, bands)
        }
        return (all, perFamily)
    }

    /// One row per family, in the order families were first added.
    public func rows() -> [FamilyRow] {
        families.map { family in
            func report(_ model: EvaluatedModel) -> EvaluationReport {
                evaluations[family]?[model]?.report() ?? EvaluationReport()
            }
            return FamilyRow(family: family, files: files[family] ?? 0, nearplay: report(.nearplay),
                             altBeacon: report(.altBeacon), logDistance: report(.logDistance2))
        }
    }
}
