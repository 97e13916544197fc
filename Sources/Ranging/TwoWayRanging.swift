/// Two-way ranging: two devices that both advertise and scan hear each other both ways, and
/// the mean of the two path losses is the pair's estimate.
///
/// Device A reads B at `r_AB = P_B + t_B + g_A − PL + ε` and B reads A at
/// `r_BA = P_A + t_A + g_B − PL + ε'`, where `P` is the measured power a device advertises, `t`
/// how much stronger it really transmits than that, `g` how much higher its receiver reports
/// RSSI than a reference one, and `PL` the path loss the distance causes (the same both ways:
/// the channel is reciprocal). Each direction's loss estimate `P − r` is off by `−(t + g)` of
/// two different devices; their mean is off by `−(t_A + g_A + t_B + g_B) / 2`:
/// - where a device's advertised measured power was taken with its own receiver (so its `t` is
///   `−g`: a receiver that reads 6 dB high makes it advertise 6 dB high), both devices'
///   offsets cancel exactly, which no single reading can do;
/// - where transmit and receive offsets are unrelated, the mean only halves the variance of
///   the offset error (a standard deviation 0.71 times one direction's).
/// Shadowing is common to both directions (same path), so it does not average out; the two
/// filters' uncertainties do.
public enum TwoWayRanging {
    /// One direction of a pair: the filtered RSSI one device read of the other, and the measured
    /// power the other advertises.
    public struct Direction: Sendable, Hashable {
        public var filteredRSSI: Double
        public var measuredPower: Double
        /// The filter's estimate variance (dB²), 0 when unknown.
        public var filterVariance: Double

        public init(filteredRSSI: Double, measuredPower: Double, filterVariance: Double = 0) {
            self.filteredRSSI = filteredRSSI
            self.measuredPower = measuredPower
            self.filterVariance = filterVariance
        }

        /// The path loss this direction implies, dB.
        public var loss: Double { measuredPower - filteredRSSI }
    }

    /// The pair's distance and interval from my reading of the peer (`forward`) and, when the
    /// peer reported one, its reading of me (`reverse`); one-way without it.
    public static func estimate(forward: Direction, reverse: Direction?, model: DistanceModel,
                                uncertainty: RangingUncertainty) -> (distance: Double, interval: ClosedRange<Double>?)? {
        var rssi = forward.filteredRSSI
        var filterVariance = forward.filterVariance
        if let reverse {
            // The mean loss, as a reading against the forward direction's measured power.
            rssi = forward.measuredPower - (forward.loss + reverse.loss) / 2
            filterVariance = (forward.filterVariance + reverse.filterVariance) / 4
        }
        guard let distance = model.distance(rssi: rssi, measuredPower: forward.measuredPower) else { return nil }
        let spread = uncertainty.spread(rssi: rssi, measuredPower: forward.measuredPower, model: model, filterVariance: filterVariance)
        return (distance, model.interval(rssi: rssi, measuredPower: forward.measuredPower, spread: spread))
    }
}
