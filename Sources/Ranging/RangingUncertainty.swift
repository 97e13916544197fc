import Foundation

/// How wide a range event's distance interval is: the spread, in dB, of the true path loss
/// around the one the filtered RSSI implies, turned into metres through the distance model.
///
/// Three independent parts add as variances (dB²):
/// - **shadowing**, `shadowing²`: walls, bodies and multipath make the loss at a given
///   distance differ from the model's by a few dB that no amount of averaging removes (indoor
///   measurements put its standard deviation at 4–8 dB);
/// - **the filter's own uncertainty** about the mean RSSI: its estimate variance given the
///   spread of the readings it has seen (``RSSIFilter/estimateVariance(readingVariance:)``),
///   large right after a beacon appears and shrinking as readings accumulate;
/// - **the exponent's uncertainty**: the log-distance exponent of a site is not known better
///   than ±`exponentSpread`, and an error `δn` moves the implied loss by `L·δn/n` dB, where
///   `L = measuredPower − rssi`. It grows with distance from 1 m (the calibration point), where
///   it is zero.
///
/// With the total standard deviation `s`, the interval is the model's distance at `rssi + s`
/// and at `rssi − s`: for log-distance, `d · 10^(∓s / 10n)`. If the loss error were normal
/// it would hold the truth 68 % of the time, as it does on simulated rooms with a known
/// shadowing and exponent.
///
/// The recordings' errors are neither normal nor symmetric, so range events use ``fitted``
/// when it is set (the default): a spread toward nearer and one toward farther fitted on
/// the development families (``FittedSpread``). This symmetric spread remains what two-way
/// ranging uses and what ``init(shadowing:exponentSpread:)`` gives.
public struct RangingUncertainty: Sendable, Hashable {
    /// Standard deviation of shadowing, dB.
    public var shadowing: Double = 6
    /// Standard deviation of the site's path-loss exponent around the model's.
    public var exponentSpread: Double = 0.5
    /// The two-sided spread range events use; nil: the symmetric ``spread(rssi:measuredPower:model:filterVariance:)``.
    public var fitted: FittedSpread?

    /// The fitted spread for range events (``FittedSpread/developmentFamilies``), 6 dB of
    /// shadowing and δn = 0.5 for two-way ranging.
    public init() {
        fitted = .developmentFamilies
    }

    /// The symmetric spread only, with these parts: what simulated rooms with known shadowing
    /// are checked against.
    public init(shadowing: Double, exponentSpread: Double = 0.5) {
        self.shadowing = shadowing
        self.exponentSpread = exponentSpread
        fitted = nil
    }

    /// Weight of a new squared residual in a track's running reading variance (about the last
    /// 20 readings).
    public static let spreadSmoothing = 0.05

    /// The reading variance assumed before a beacon's readings show their own (dB²): 4 dB.
    public static let initialReadingVariance = 16.0

    /// The standard deviation, in dB, of the true loss around the one `rssi` implies.
    public func spread(rssi: Double, measuredPower: Double, model: DistanceModel, filterVariance: Double) -> Double {
        var variance = shadowing * shadowing + max(0, filterVariance)
        if case let .logDistance(exponent) = model {
            let shift = (measuredPower - rssi) * exponentSpread / exponent
            variance += shift * shift
        }
        return variance.squareRoot()
    }
}

extension DistanceModel {
    /// The distances at `rssi + spread` and `rssi − spread` (dB): the interval a spread of the
    /// loss gives. An upper end beyond ``farthest`` is capped there.
    public func interval(rssi: Double, measuredPower: Double, spread: Double) -> ClosedRange<Double>? {
        guard let low = distance(rssi: rssi + abs(spread), measuredPower: measuredPower) else { return nil }
        let high = distance(rssi: rssi - abs(spread), measuredPower: measuredPower) ?? Self.farthest
        return min(low, high)...max(low, high)
    }

    /// The distances at `rssi + nearer` and `rssi − farther` (dB): the interval a two-sided
    /// spread gives. A lower end at or within ``PathLoss/nearest`` is 0 (the loss model says
    /// nothing nearer: a touching beacon reads as one 10 cm away), an upper end beyond
    /// ``farthest`` is capped there.
    public func interval(rssi: Double, measuredPower: Double, nearer: Double, farther: Double) -> ClosedRange<Double>? {
        guard let low = distance(rssi: rssi + abs(nearer), measuredPower: measuredPower) else { return nil }
        let high = distance(rssi: rssi - abs(farther), measuredPower: measuredPower) ?? Self.farthest
        let lower = min(low, high)
        return (lower <= PathLoss.nearest ? 0 : lower)...max(low, high)
    }
}
