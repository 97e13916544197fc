import Foundation

/// How a filtered RSSI and the beacon's measured power (RSSI at 1 m) become metres.
public enum DistanceModel: Sendable, Hashable, CustomStringConvertible {
    /// Log-distance path loss: `d = 10^((measuredPower − rssi) / (10 · exponent))`.
    /// Exponent 2 is free space; indoors, line of sight, 1.6–2.5 is typical.
    case logDistance(exponent: Double)
    /// The AltBeacon library's fitted curve `d = c1 · (rssi / measuredPower)^c2 + c3`
    /// (and `ratio^10` when the reading is stronger than the measured power).
    case altBeaconCurve(AltBeaconCurve)

    /// The default model: log-distance with the exponent chosen from the development recordings
    /// (see "Choosing the defaults" in the README for why 2.8).
    public static let `default` = DistanceModel.logDistance(exponent: 2.8)

    /// Metres from a filtered RSSI and the 1 m measured power, both dBm. Nil when the measured
    /// power is not a usable negative value, or the model gives no finite distance.
    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard measuredPower < 0, rssi.isFinite else { return nil }
        let metres: Double
        switch self {
        case let .logDistance(exponent):
            metres = PathLoss.distance(rssi: rssi, measuredPower: measuredPower, exponent: exponent)
        case let .altBeaconCurve(curve):
            let ratio = rssi / measuredPower
            metres = ratio < 1 ? pow(ratio, 10) : curve.c1 * pow(ratio, curve.c2) + curve.c3
        }
        return metres.isFinite && metres < Self.farthest ? metres : nil
    }

    /// The RSSI at which the model gives `distance`: the inverse of ``distance(rssi:measuredPower:)``,
    /// used to turn distance thresholds into RSSI thresholds. Distance grows as RSSI falls in
    /// both models. (The AltBeacon curve jumps from 1 m to c1 + c3 where the reading equals the
    /// measured power; distances in that gap map to the measured power.)
    public func rssi(atDistance distance: Double, measuredPower: Double) -> Double? {
        guard measuredPower < 0, distance > 0, distance.isFinite else { return nil }
        switch self {
        case let .logDistance(exponent):
            return PathLoss.rssi(atDistance: distance, measuredPower: measuredPower, exponent: exponent)
        case let .altBeaconCurve(curve):
            let ratio = distance < min(1, curve.c1 + curve.c3) ? pow(distance, 0.1)
                : distance <= curve.c1 + curve.c3 ? 1 : pow((distance - curve.c3) / curve.c1, 1 / curve.c2)
            return ratio.isFinite ? ratio * measuredPower : nil
        }
    }

    /// Beyond this a model's estimate means nothing (BLE's longest coded-PHY range is about 1 km).
    public static let farthest = 10_000.0

    public var description: String {
        switch self {
        case let .logDistance(n): "log-distance(n=\(n))"
        case let .altBeaconCurve(c): "altbeacon-curve(\(c.c1), \(c.c2), \(c.c3))"
        }
    }
}

/// Coefficients of the AltBeacon library's per-phone distance curve.
public struct AltBeaconCurve: Sendable, Hashable {
    public var c1: Double
    public var c2: Double
    public var c3: Double

    public init(c1: Double, c2: Double, c3: Double) {
        self.c1 = c1
        self.c2 = c2
        self.c3 = c3
    }

    /// The Nexus 5 coefficients, the library's default.
    public static let nexus5 = AltBeaconCurve(c1: 0.42093, c2: 6.9476, c3: 0.54992)
}

/// The log-distance path-loss formula, `rssi = measuredPower − 10·n·log10(d)`, and its inverse:
/// the one copy the ranging model, the trace simulator and the simulated air all use.
public enum PathLoss {
    /// The nearest distance the formula describes, metres: closer distances going in count as
    /// this one. 10 cm is about one wavelength at 2.4 GHz (12.5 cm), inside which the far-field
    /// model does not hold at all; the loss there is `10·n` dB less than at 1 m (28 dB at
    /// n = 2.8), so a beacon touching the receiver reads that much above its measured power
    /// instead of without bound (log10(0) is −∞). (The trace simulator used to clamp at 5 cm
    /// and the simulated air at 10 cm.)
    public static let nearest = 0.1

    /// The mean RSSI at `distance` metres (``nearest`` for anything closer) of a beacon whose
    /// RSSI at 1 m is `measuredPower`, in dBm.
    @inlinable
    public static func rssi(atDistance distance: Double, measuredPower: Double, exponent: Double) -> Double {
        measuredPower - 10 * exponent * log10(max(distance, nearest))
    }

    /// Metres at which the mean RSSI is `rssi`: the inverse of ``rssi(atDistance:measuredPower:exponent:)``
    /// at ``nearest`` and beyond. Not clamped: a reading stronger than the 10 cm level still gives
    /// its estimate below 10 cm (the ranging figures were measured so, and clamping would move
    /// hundreds of the recordings' range events), and ``DistanceModel`` bounds it from above.
    @inlinable
    public static func distance(rssi: Double, measuredPower: Double, exponent: Double) -> Double {
        // 10^x as e^(x·ln 10): the same value, and exp is cheaper than pow on the hot path.
        exp((measuredPower - rssi) / (10 * exponent) * 2.302585092994046)
    }
}
