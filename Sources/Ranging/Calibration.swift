import Foundation

/// The calibration maths: a beacon's measured power, a path-loss exponent and a receiver's
/// offset, from readings taken at known distances.
public enum Calibration {
    /// The measured power (RSSI at 1 m) from readings taken at 1 m: their median, rounded to a
    /// whole dBm with halves toward +∞. Nil without readings.
    public static func measuredPower(readingsAtOneMetre readings: [Int]) -> Int? {
        guard let median = median(readings.map(Double.init)) else { return nil }
        return Int((median + 0.5).rounded(.down))
    }

    /// The log-distance exponent that best explains median RSSI at each distance:
    /// least squares of `measuredPower − rssi = 10 n log10(d)` through the origin. Distances below
    /// 0.2 m (phones touching) are left out; nil with fewer than two usable distances.
    public static func pathLossExponent(readings: [(distance: Double, rssi: Int)], measuredPower: Double) -> Double? {
        pathLossExponent(losses: readings.map { ($0.distance, measuredPower - Double($0.rssi)) })
    }

    /// The same fit on path losses (`measuredPower − rssi`, dB), for readings of beacons with
    /// different measured powers.
    public static func pathLossExponent(losses: [(distance: Double, loss: Double)]) -> Double? {
        let byDistance = Dictionary(grouping: losses.filter { $0.distance >= 0.2 }, by: \.distance)
        guard byDistance.count >= 2 else { return nil }
        var xx = 0.0, xy = 0.0
        for (distance, group) in byDistance {
            guard let loss = median(group.map(\.loss)) else { continue }
            let x = 10 * log10(distance)
            xx += x * x
            xy += x * loss
        }
        return xx > 0 ? xy / xx : nil
    }

    /// A receiver's offset in dB: what to add to its readings so that they match a reference
    /// receiver's for the same beacon at the same place (the median difference).
    public static func receiverOffset(readings: [Int], reference: [Int]) -> Double? {
        guard let mine = median(readings.map(Double.init)), let theirs = median(reference.map(Double.init)) else { return nil }
        return theirs - mine
    }

    /// The median; nil for no values.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
