/// When a silent beacon counts as gone.
///
/// The exit timeout adapts to each beacon: it is `silentIntervals` times the beacon's observed
/// mean gap between sightings, kept within `minimumTimeout`…`maximumTimeout`. A beacon seen
/// only once has `initialTimeout`. Gaps longer than the timeout in force (the beacon left and
/// came back) do not feed the mean.
///
/// Why 12 intervals and 2 s: with a third of packets lost, the observed mean gap of a 100 ms
/// beacon is 150 ms, so the timeout is 2 s (the floor; 12 · 0.15 = 1.8 s). A false exit needs
/// about 20 consecutive losses (0.33²⁰ ≈ 2·10⁻¹⁰ per packet), while a beacon that really leaves
/// is gone after 2 s, against AltBeacon's 10 s and CoreLocation's ~30 s. A beacon heard every
/// 10 s (the NIST recordings) gets 30 s, the ceiling.
public struct PresenceConfiguration: Sendable, Hashable {
    public var silentIntervals: Double = 12
    public var minimumTimeout: Double = 2
    public var maximumTimeout: Double = 30
    public var initialTimeout: Double = 30
    /// Weight of a new gap in the running mean.
    public var gapSmoothing: Double = 0.2

    public init(silentIntervals: Double = 12, minimumTimeout: Double = 2, maximumTimeout: Double = 30,
                initialTimeout: Double? = nil, gapSmoothing: Double = 0.2) {
        self.silentIntervals = silentIntervals
        self.minimumTimeout = minimumTimeout
        self.maximumTimeout = maximumTimeout
        self.initialTimeout = initialTimeout ?? maximumTimeout
        self.gapSmoothing = gapSmoothing
    }

    func timeout(meanGap: Double?) -> Double {
        guard let gap = meanGap else { return initialTimeout }
        return min(maximumTimeout, max(minimumTimeout, silentIntervals * gap))
    }
}
