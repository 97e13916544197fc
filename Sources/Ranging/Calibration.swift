import BeaconFrames
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

    /// A site's profile from readings of beacons held at two or more known distances: each
    /// reading's `rssi − measuredPower` (so beacons of different measured powers pool), its
    /// median per distance, and the line `a − 10 n log10(d)` through those medians. The exponent
    /// is `n`; the receiver's offset is `−a`, what to add to its readings so that it reads the
    /// measured power at 1 m. Distances below 0.2 m are left out.
    ///
    /// Without a prior the line is the least-squares one. With one, it is the posterior mean of
    /// a Bayesian linear regression: each distance's median is taken as off by the site's
    /// shadowing at that spot (`prior.shadowing` dB, which no number of readings there averages
    /// away), the exponent as `prior.exponent ± prior.exponentSpread` and the offset as
    /// `0 ± prior.offsetSpread` dB before the readings. Two distances with 6 dB of shadowing
    /// say little about the exponent (its least-squares error is then about ±1.8 at 1 m and
    /// 3 m), and the prior keeps such a fit from swinging to what two spots happened to read.
    public static func siteProfile(readings: [(distance: Double, rssi: Int, measuredPower: Int)],
                                   prior: SitePrior? = nil) throws(CalibrationError) -> RangingProfile {
        let usable = readings.filter { $0.distance >= 0.2 && $0.distance.isFinite }
        let byDistance = Dictionary(grouping: usable, by: \.distance)
        guard byDistance.count >= 2 else { throw .tooFewDistances(Array(byDistance.keys).sorted()) }
        var points: [(x: Double, y: Double)] = []
        for (distance, group) in byDistance {
            guard let median = median(group.map { Double($0.rssi - $0.measuredPower) }) else { continue }
            points.append((10 * log10(distance), median))
        }
        let meanX = points.map(\.x).reduce(0, +) / Double(points.count)
        let sxx = points.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        // log10 of the distances must differ by at least 0.1 (1 m and 1.26 m).
        guard sxx >= 1 else { throw .tooFewDistances(Array(byDistance.keys).sorted()) }
        // Normal equations of y = a·1 + n·(−x), plus the prior's precision when there is one.
        let noise = prior.map { 1 / ($0.shadowing * $0.shadowing) } ?? 1
        var a11 = 0.0, a12 = 0.0, a22 = 0.0, b1 = 0.0, b2 = 0.0
        for point in points {
            a11 += noise
            a12 -= point.x * noise
            a22 += point.x * point.x * noise
            b1 += point.y * noise
            b2 -= point.x * point.y * noise
        }
        if let prior {
            a11 += 1 / (prior.offsetSpread * prior.offsetSpread)
            a22 += 1 / (prior.exponentSpread * prior.exponentSpread)
            b2 += prior.exponent / (prior.exponentSpread * prior.exponentSpread)
        }
        let determinant = a11 * a22 - a12 * a12
        let intercept = (a22 * b1 - a12 * b2) / determinant
        let exponent = (a11 * b2 - a12 * b1) / determinant
        guard exponent >= RangingProfile.plausibleExponents.lowerBound, exponent <= RangingProfile.plausibleExponents.upperBound else {
            throw .implausibleExponent(exponent)
        }
        return RangingProfile(rssiOffset: -intercept, exponent: exponent, distances: Array(byDistance.keys).sorted(),
                              readings: usable.count)
    }

    /// A reading a site-profile fit can use: a beacon's plausible RSSI
    /// (``RangingConfiguration/plausibleRSSI``, what the tracker keeps too) and the measured power
    /// its frame carries; nil for anything else. The one filter of calibration readings, whether
    /// they come from a trace (`eval --calibrate-from`, `calibrate ranging --at D=FILE`) or from
    /// the radio (`calibrate ranging --live`), so the same readings give the same fit.
    public static func reading(_ advertisement: Advertisement) -> (identity: BeaconIdentity, rssi: Int, measuredPower: Int)? {
        guard let sighting = Sighting(advertisement), let rssi = sighting.rssi,
              RangingConfiguration.plausibleRSSI.contains(rssi), let power = sighting.measuredPower else { return nil }
        return (sighting.identity, rssi, power)
    }

    /// ``siteProfile(readings:prior:)`` with the prior every calibration command uses: the
    /// defaults' (``SitePrior/init(exponent:exponentSpread:offsetSpread:shadowing:)``: exponent
    /// 2.8 ± 0.5, offset 0 ± 6 dB) with `spotShadowing` dB at each spot, or none (a plain
    /// least-squares fit) when `spotShadowing` is 0. The profile is stored and applied to
    /// whatever configuration ranges with it, so its prior does not follow any one configuration.
    public static func siteProfile(readings: [(distance: Double, rssi: Int, measuredPower: Int)],
                                   spotShadowing: Double) throws(CalibrationError) -> RangingProfile {
        try siteProfile(readings: readings, prior: spotShadowing > 0 ? SitePrior(shadowing: spotShadowing) : nil)
    }

    /// The median; nil for no values.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Why readings at known distances gave no site profile.
public enum CalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than two distances (of at least 0.2 m, with log-distances apart by at least 0.1).
    case tooFewDistances([Double])
    /// The fitted exponent is outside ``RangingProfile/plausibleExponents``.
    case implausibleExponent(Double)

    public var description: String {
        switch self {
        case let .tooFewDistances(distances):
            "readings at \(distances.isEmpty ? "no usable distance" : distances.map { "\($0) m" }.joined(separator: ", ")) are not enough: hold the beacon at two or more distances at least 0.2 m away and at least 25 % apart (1 m and 3 m are good)"
        case let .implausibleExponent(exponent):
            "the readings give a path-loss exponent of \(String(format: "%.2f", exponent)), outside \(RangingProfile.plausibleExponents.lowerBound)–\(RangingProfile.plausibleExponents.upperBound): the beacon was probably not held still, or the distances were mixed up; measure again"
        }
    }
}

/// A receiver's calibration at a site: its RSSI offset and the site's path-loss exponent.
public struct RangingProfile: Sendable, Hashable, Codable {
    /// dB added to this receiver's readings (``RangingConfiguration/rssiOffset``).
    public var rssiOffset: Double
    /// The site's log-distance exponent.
    public var exponent: Double
    /// The distances the profile was measured at (m), and how many readings it used.
    public var distances: [Double]
    public var readings: Int

    public init(rssiOffset: Double, exponent: Double, distances: [Double] = [], readings: Int = 0) {
        self.rssiOffset = rssiOffset
        self.exponent = exponent
        self.distances = distances
        self.readings = readings
    }

    /// Exponents a real site can have (free space is 2; corridors go below, cluttered rooms above).
    public static let plausibleExponents = 1.0...6.0

    /// `configuration` with this profile's offset and exponent.
    public func applied(to configuration: RangingConfiguration) -> RangingConfiguration {
        var configured = configuration
        configured.rssiOffset = rssiOffset
        configured.distanceModel = .logDistance(exponent: exponent)
        return configured
    }
}

/// What a site is assumed to be before its calibration readings: see
/// ``Calibration/siteProfile(readings:prior:)``.
public struct SitePrior: Sendable, Hashable {
    public var exponent: Double
    public var exponentSpread: Double
    /// Standard deviation of a receiver's offset before calibration, dB.
    public var offsetSpread: Double
    /// Standard deviation of the shadowing at one calibration spot, dB.
    public var shadowing: Double

    public init(exponent: Double = 2.8, exponentSpread: Double = 0.5, offsetSpread: Double = 6, shadowing: Double = 6) {
        self.exponent = exponent
        self.exponentSpread = exponentSpread
        self.offsetSpread = offsetSpread
        self.shadowing = shadowing
    }
}
