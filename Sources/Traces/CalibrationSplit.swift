import Foundation
import BeaconFrames
import Ranging

/// A recording split for a held-out two-point calibration: readings at two of its distances to
/// fit a ``Ranging/RangingProfile`` on, and the rest to score it on.
///
/// The two distances are the recording's nearest to 1 m and to 3 m (on a log scale, among
/// distances with at least `minimumReadings` readings, 0.2 m or more); the calibration takes
/// the first half, in time, of the readings at each, as a user would hold the beacon there for
/// a while. Everything else (the other half of those two distances included) is scored.
public struct CalibrationSplit: Sendable {
    public var calibration: [TraceRecord] = []
    public var rest: [TraceRecord] = []
    public var distances: [Double] = []

    public static let minimumReadings = 10

    public init(_ records: [TraceRecord], targets: [Double] = [1, 3]) {
        var counts: [Double: Int] = [:]
        for record in records { if let truth = record.truthDistance, truth >= 0.2 { counts[truth, default: 0] += 1 } }
        var candidates = counts.filter { $0.value >= Self.minimumReadings }.map(\.key)
        for target in targets {
            guard let best = candidates.min(by: { abs(log($0 / target)) < abs(log($1 / target)) }) else { break }
            distances.append(best)
            candidates.removeAll { $0 == best }
        }
        var taken: [Double: Int] = [:]
        for record in records {
            if let truth = record.truthDistance, distances.contains(truth), taken[truth, default: 0] < (counts[truth] ?? 0) / 2 {
                taken[truth, default: 0] += 1
                calibration.append(record)
            } else {
                rest.append(record)
            }
        }
    }

    /// The calibration readings as the profile fit takes them (``Ranging/Calibration/reading(_:)``
    /// filters them), at `distance` or, without one, at each line's truth_m (lines without it are
    /// left out); only `beacon`'s when one is given. `eval --calibrate-from` and
    /// `calibrate ranging` both read their traces through this.
    public static func readings(_ records: [TraceRecord], at distance: Double? = nil,
                                of beacon: BeaconIdentity? = nil) -> [(distance: Double, rssi: Int, measuredPower: Int)] {
        records.compactMap { record in
            guard let metres = distance ?? record.truthDistance, let reading = Calibration.reading(record.advertisement),
                  beacon == nil || reading.identity == beacon else { return nil }
            return (metres, reading.rssi, reading.measuredPower)
        }
    }
}
