import Foundation

/// Distances as Nearplay writes them for people: one place, so the terminal views, the agent's
/// sentences and the calibration messages cannot drift apart.
public enum DistanceText {
    /// An estimate and, when known, its interval: "2.1 m (1.4–3.2)". From `wholeMetresFrom`
    /// metres on, each number loses its tenths ("12 m (8.4–17)"), which the terminal tables use
    /// to keep their columns narrow; the agent's sentences keep tenths throughout (the default).
    /// The interval is shown only with both ends.
    public static func estimate(_ distance: Double, low: Double?, high: Double?, wholeMetresFrom: Double = .infinity) -> String {
        func number(_ metres: Double) -> String { String(format: metres < wholeMetresFrom ? "%.1f" : "%.0f", metres) }
        guard let low, let high else { return number(distance) + " m" }
        return number(distance) + " m (" + number(low) + "–" + number(high) + ")"
    }

    /// ``estimate(_:low:high:wholeMetresFrom:)`` with the interval as a range.
    public static func estimate(_ distance: Double, interval: ClosedRange<Double>?, wholeMetresFrom: Double = .infinity) -> String {
        estimate(distance, low: interval?.lowerBound, high: interval?.upperBound, wholeMetresFrom: wholeMetresFrom)
    }

    /// A distance someone measured, such as a calibration spot: as few digits as it was given
    /// with ("1 m", "0.5 m", "2.25 m").
    public static func measured(_ metres: Double) -> String {
        String(format: "%g m", metres)
    }
}
