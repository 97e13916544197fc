/// Coarse distance, as CoreLocation's CLProximity: immediate (< 0.5 m), near (< 3 m), far, or
/// unknown when no distance can be estimated.
public enum Zone: String, Sendable, Hashable, CaseIterable {
    case immediate, near, far, unknown

    /// The zone a distance falls in, with no hysteresis.
    public static func of(distance: Double?, boundaries: ZoneBoundaries = .init()) -> Zone {
        guard let d = distance, d.isFinite else { return .unknown }
        return d < boundaries.immediate ? .immediate : d < boundaries.near ? .near : .far
    }
}

/// Zone boundaries and the hysteresis that keeps a beacon at a boundary from flapping.
///
/// A beacon leaves its zone only when its distance is beyond the boundary by `margin` of the
/// boundary: with the defaults, near becomes far above 3.3 m and far becomes near below 2.7 m;
/// immediate becomes near above 0.55 m and near becomes immediate below 0.45 m. With a
/// log-distance exponent of 2 a 10 % margin is about 0.9 dB of filtered RSSI, a little more
/// than the Kalman filter's steady-state jitter on a still beacon.
public struct ZoneBoundaries: Sendable, Hashable {
    public var immediate: Double = 0.5
    public var near: Double = 3.0
    /// Fraction of the boundary distance (0 disables hysteresis).
    public var margin: Double = 0.1
    /// Seconds a new zone must hold, past the hysteresis, before a tracker reports it (0 reports
    /// it at once). A filter that follows movement also follows a fade of a few seconds; the
    /// dwell keeps such a fade from showing as a zone change, and costs a walker 2 s of zone lag.
    public var dwell: Double = 2

    public init(immediate: Double = 0.5, near: Double = 3.0, margin: Double = 0.1, dwell: Double = 2) {
        self.immediate = immediate
        self.near = near
        self.margin = margin
        self.dwell = dwell
    }

    /// The zone thresholds as RSSI values for one measured power under `model`, so that zones can
    /// be followed on the filtered RSSI without computing a distance at every reading.
    public func thresholds(model: DistanceModel, measuredPower: Double) -> ZoneThresholds? {
        let up = 1 + margin, down = 1 - margin
        guard let immediatePlain = model.rssi(atDistance: immediate, measuredPower: measuredPower),
              let immediateOut = model.rssi(atDistance: immediate * up, measuredPower: measuredPower),
              let immediateIn = model.rssi(atDistance: immediate * down, measuredPower: measuredPower),
              let nearPlain = model.rssi(atDistance: near, measuredPower: measuredPower),
              let nearOut = model.rssi(atDistance: near * up, measuredPower: measuredPower),
              let nearIn = model.rssi(atDistance: near * down, measuredPower: measuredPower),
              let farthest = model.rssi(atDistance: DistanceModel.farthest, measuredPower: measuredPower)
        else { return nil }
        return ZoneThresholds(immediate: immediatePlain, immediateOut: immediateOut, immediateIn: immediateIn,
                              near: nearPlain, nearOut: nearOut, nearIn: nearIn, farthest: farthest)
    }

    /// The zone after a new filtered RSSI, given the current zone: ``next(from:distance:)`` on
    /// the RSSI side of the model (a larger distance is a smaller RSSI).
    public func next(from current: Zone, rssi: Double, thresholds t: ZoneThresholds) -> Zone {
        guard rssi.isFinite, rssi > t.farthest else { return .unknown }
        let plain: Zone = rssi > t.immediate ? .immediate : rssi > t.near ? .near : .far
        guard current != .unknown, plain != current else { return plain }
        switch (current, plain) {
        case (.immediate, .near): return rssi < t.immediateOut ? .near : .immediate
        case (.near, .immediate): return rssi > t.immediateIn ? .immediate : .near
        case (.near, .far): return rssi < t.nearOut ? .far : .near
        case (.far, .near): return rssi > t.nearIn ? .near : .far
        case (.immediate, .far): return rssi < t.nearOut ? .far : .near
        case (.far, .immediate): return rssi > t.immediateIn ? .immediate : .near
        default: return plain
        }
    }

    /// The zone after a new distance, given the current zone.
    public func next(from current: Zone, distance: Double?) -> Zone {
        let plain = Zone.of(distance: distance, boundaries: self)
        guard let d = distance, current != .unknown, plain != current else { return plain }
        let up = 1 + margin, down = 1 - margin
        switch (current, plain) {
        case (.immediate, .near): return d > immediate * up ? .near : .immediate
        case (.near, .immediate): return d < immediate * down ? .immediate : .near
        case (.near, .far): return d > near * up ? .far : .near
        case (.far, .near): return d < near * down ? .near : .far
        case (.immediate, .far): return d > near * up ? .far : .near
        case (.far, .immediate): return d < immediate * down ? .immediate : .near
        default: return plain
        }
    }
}

/// Zone boundaries in RSSI (dBm) for one measured power: see ``ZoneBoundaries/thresholds(model:measuredPower:)``.
public struct ZoneThresholds: Sendable, Hashable {
    /// Readings above it are immediate (no hysteresis).
    public var immediate: Double
    /// Leaving immediate: below this.
    public var immediateOut: Double
    /// Entering immediate: above this.
    public var immediateIn: Double
    public var near: Double
    public var nearOut: Double
    public var nearIn: Double
    /// Readings at or below it give no distance (beyond ``DistanceModel/farthest``).
    public var farthest: Double
}

/// The zone a tracker reports: the zone after hysteresis, once a new one has held for
/// ``ZoneBoundaries/dwell`` seconds. Changes to and from ``Zone/unknown`` are reported at once.
struct ZoneDwell: Sendable {
    /// The zone waiting to be reported, and since when it has been the followed zone.
    private var candidate: Zone = .unknown
    private var since = 0.0

    /// The zone to report at `time`, given the one reported so far and the one followed now.
    mutating func reported(_ reported: Zone, followed: Zone, at time: Double, dwell: Double) -> Zone {
        if followed == reported || reported == .unknown || followed == .unknown || !(dwell > 0) {
            candidate = .unknown
            return followed
        }
        if followed != candidate {
            candidate = followed
            since = time
        }
        guard time - since >= dwell else { return reported }
        candidate = .unknown
        return followed
    }
}
