import Foundation

/// The interval's spread as fitted on the development recordings: a spread toward nearer and one
/// toward farther that depend on the path loss, widened while a track is young.
///
/// Both sides, in dB of path loss, add independent parts as variances:
/// - **the path-loss table** (``knots``): how far the true loss strays, toward nearer and toward
///   farther, from the one the filtered RSSI implies. It folds in shadowing and the exponent's
///   uncertainty, which the five families show to be lopsided: near 1 m, where the measured power
///   pins the line, both sides are small; below it readings saturate, so a beacon estimated
///   under 0.5 m may be touching (the lower end then reaches ``PathLoss/nearest`` and is
///   reported as 0); beyond it sites with exponents down to 1 read a beacon at 8 m as at 2 m,
///   so the farther side is wide there. Linear in the path loss between knots, constant beyond.
/// - **the filter's own uncertainty** (``RSSIFilter/estimateVariance(readingVariance:)``);
/// - **few readings**, farther side only: `fewReadings² · min(1, fewReadingsScale / readings)`.
///   A track's first readings come from a beacon that has just come into range, more often
///   far than near.
///
/// No movement term: fitted on the recordings, any weight on the following filter's
/// fast-minus-slow gap widened the interval where it was already wide enough (on the NIST Pis
/// the gap is reading noise, 3.4 dB median, not motion). The figures, how they were fitted and
/// what they cost in width: Benchmarks/ranging.md, "The interval".
public struct FittedSpread: Sendable, Hashable {
    /// The spread toward nearer and toward farther (dB) at one path loss `measuredPower − rssi` (dB).
    public struct Knot: Sendable, Hashable {
        public var pathLoss: Double
        public var nearer: Double
        public var farther: Double

        public init(pathLoss: Double, nearer: Double, farther: Double) {
            self.pathLoss = pathLoss
            self.nearer = nearer
            self.farther = farther
        }
    }

    /// Ascending path loss; at least one.
    public var knots: [Knot]
    /// The farther side's extra spread (dB) for a track's first readings...
    public var fewReadings: Double
    /// ...which fades as `fewReadingsScale / readings` beyond this many.
    public var fewReadingsScale: Double

    public init(knots: [Knot], fewReadings: Double, fewReadingsScale: Double) {
        precondition(!knots.isEmpty, "a fitted spread needs at least one knot")
        self.knots = knots.sorted { $0.pathLoss < $1.pathLoss }
        self.fewReadings = fewReadings
        self.fewReadingsScale = fewReadingsScale
    }

    /// The path loss (dB) at `metres` with the default model, where the table's knots sit.
    static func loss(atMetres metres: Double) -> Double {
        let power = -59.0  // any measured power: the loss does not depend on it
        return power - (DistanceModel.default.rssi(atDistance: metres, measuredPower: power) ?? power)
    }

    /// Fitted on the five development families (`nearplay eval ../shared/data/traces/*.jsonl`;
    /// Benchmarks/ranging.md, "The interval"). Knots at 0.25, 0.5, 1, 2, 4, 8 and 16 m with
    /// n = 2.8.
    public static let developmentFamilies = FittedSpread(
        knots: zip([0.25, 0.5, 1, 2, 4, 8, 16], zip([17.5, 15, 7.5, 0, 0, 0.5, 0.5], [22, 10, 3, 13.5, 15, 13, 13])).map { metres, sides in
            Knot(pathLoss: loss(atMetres: metres), nearer: sides.0, farther: sides.1)
        },
        fewReadings: 4, fewReadingsScale: 8)

    /// The spread toward nearer and toward farther (dB, both positive) of a range event at
    /// `pathLoss` dB (`measuredPower − rssi`), with the filter's estimate variance (dB²) and the
    /// track's readings so far. No allocation.
    public func sides(pathLoss: Double, filterVariance: Double, readings: Int) -> (nearer: Double, farther: Double) {
        let shared = max(0, filterVariance.isFinite ? filterVariance : 0)
        let (nearer, farther) = table(pathLoss)
        let young = fewReadings * fewReadings * min(1, fewReadingsScale / Double(max(1, readings)))
        return ((shared + nearer * nearer).squareRoot(), (shared + farther * farther + young).squareRoot())
    }

    /// The table's two sides at `pathLoss`, linear between knots and constant beyond the ends.
    func table(_ pathLoss: Double) -> (Double, Double) {
        let first = knots[0], last = knots[knots.count - 1]
        if pathLoss <= first.pathLoss { return (first.nearer, first.farther) }
        if pathLoss >= last.pathLoss { return (last.nearer, last.farther) }
        var upper = 1
        while knots[upper].pathLoss < pathLoss { upper += 1 }
        let low = knots[upper - 1], high = knots[upper]
        let weight = (pathLoss - low.pathLoss) / (high.pathLoss - low.pathLoss)
        return (low.nearer + (high.nearer - low.nearer) * weight, low.farther + (high.farther - low.farther) * weight)
    }
}
