import Foundation

/// When a silent beacon counts as gone.
///
/// The exit timeout is derived per beacon from two things it observes: the beacon's advertising
/// interval `T` (the typical short gap between sightings) and the fraction `p` of its packets
/// that are lost (from gaps that span several intervals). A silence longer than `k·T` needs
/// `k` packets in a row to be lost, which happens after a received packet with probability `pᵏ`;
/// with `(1 − p)·3600 / T` received packets an hour, false exits come at the rate
///
///     r(k) = (1 − p) · (3600 / T) · pᵏ   per hour.
///
/// The timeout is the smallest `k` with `r(k) ≤ falseExitsPerHour`, plus a quarter interval for
/// advertising jitter: `timeout = (k + ¼) · T`, kept within `minimumTimeout`…`maximumTimeout`.
///
/// Worked through for the defaults (one false exit per two hours at most):
/// - 1 Hz beacon, a third of packets lost: `k = ⌈ln(0.5 / 2400) / ln(⅓)⌉ = 8`, timeout 8.25 s
///   (AltBeacon: a fixed 10 s); expected false exits 2400 · ⅓⁸ ≈ 0.37 an hour.
/// - 10 Hz beacon, same loss: `k = 10`, 1.0 s, raised to the 2 s floor.
/// - a beacon heard every 10 s (the NIST recordings): the 30 s ceiling.
/// - no loss seen: `p` is taken as at least `minimumLoss`, so a beacon that never lost a packet
///   still gets a few intervals of grace.
///
/// A beacon seen only once has `initialTimeout`. Gaps longer than the timeout in force (the
/// beacon left and came back) feed neither estimate.
public struct PresenceConfiguration: Sendable, Hashable {
    /// The false-exit rate the timeout is chosen for, per hour of presence.
    public var falseExitsPerHour: Double = 0.5
    public var minimumTimeout: Double = 2
    public var maximumTimeout: Double = 30
    public var initialTimeout: Double = 30
    /// Weight of a new gap in the running mean gap and in the interval estimate.
    public var gapSmoothing: Double = 0.2
    /// The loss estimate is a running mean over about `1 / lossSmoothing` expected packets (200:
    /// its standard deviation at a third lost is then about 0.024, so the 1 Hz timeout below
    /// stays 8.25 s, or 9.25 s, and within 10 s unless the estimate passes 0.395).
    public var lossSmoothing: Double = 0.005
    /// The loss assumed before any gap is seen, and the floor of the estimate.
    public var initialLoss: Double = 0.25
    public var minimumLoss: Double = 0.05

    public init(falseExitsPerHour: Double = 0.5, minimumTimeout: Double = 2, maximumTimeout: Double = 30,
                initialTimeout: Double? = nil, gapSmoothing: Double = 0.2) {
        self.falseExitsPerHour = falseExitsPerHour
        self.minimumTimeout = minimumTimeout
        self.maximumTimeout = maximumTimeout
        self.initialTimeout = initialTimeout ?? maximumTimeout
        self.gapSmoothing = gapSmoothing
    }

    /// The timeout for a beacon with advertising interval `interval` (s) and packet loss `loss`;
    /// `initialTimeout` when the interval is not known yet.
    public func timeout(interval: Double?, loss: Double) -> Double {
        guard let interval, interval > 0 else { return initialTimeout }
        let p = min(0.95, max(minimumLoss, loss))
        // Smallest k ≥ 1 with receivedPerHour · pᵏ ≤ target, counted up rather than taken from
        // two logarithms (the tracker asks every 8th sighting; k is a handful), and no further
        // than the ceiling caps the timeout anyway.
        var falseExits = (1 - p) * 3600 / interval * p
        var k = 1.0
        let ceiling = maximumTimeout / interval - 0.25
        while falseExits > falseExitsPerHour, k < ceiling {
            falseExits *= p
            k += 1
        }
        return min(maximumTimeout, max(minimumTimeout, (k + 0.25) * interval))
    }
}

/// What a track learns about a beacon's timing: its advertising interval and its packet loss.
struct GapStatistics: Sendable {
    /// Running mean of all gaps (s).
    private(set) var meanGap: Double?
    /// Running estimate of the advertising interval: the gaps that span one interval.
    private(set) var interval: Double?
    /// Running estimate of the fraction of packets lost.
    private(set) var loss: Double
    /// Expected packets counted so far (the loss estimate is a plain mean until it reaches
    /// `1 / lossSmoothing`, then a running one).
    private var counted = 0.0

    init(initialLoss: Double) { loss = initialLoss }

    /// Takes one gap between sightings.
    mutating func add(gap: Double, configuration: PresenceConfiguration) {
        let smoothing = configuration.gapSmoothing
        meanGap = meanGap.map { $0 + smoothing * (gap - $0) } ?? gap
        guard gap > 0 else { return }  // several readings at once (a receiver's 1 s timestamps)
        guard let current = interval else {
            interval = gap
            return
        }
        // A clearly shorter gap means the interval was overestimated (packets were lost
        // before the estimate started): restart from it.
        if gap < 0.7 * current {
            interval = gap
            return
        }
        // Most gaps span one interval: no division for those.
        let intervals = gap < 1.5 * current ? 1 : (gap / current).rounded()
        if intervals <= 1 { interval = current + smoothing * (gap - current) }
        // This gap stood for `intervals` expected packets, of which all but the last were lost:
        // a running mean over packets, a plain mean (with `initialLoss` as 4 packets' worth of
        // prior) until enough have been counted.
        counted += intervals
        let rate = counted * configuration.lossSmoothing >= 1 ? configuration.lossSmoothing
            : max(configuration.lossSmoothing, 1 / (counted + 4))
        // Most gaps lost nothing (a share of 0 lost, and no division).
        let lostShare = intervals == 1 ? 0 : (intervals - 1) / intervals
        loss += min(1, rate * intervals) * (lostShare - loss)
    }
}
