/// Which RSSI filter smooths a beacon's readings, with its constants.
public enum RSSIFilterKind: Sendable, Hashable, CustomStringConvertible {
    /// A one-dimensional Kalman filter on a random-walk signal. `processNoise` is the variance
    /// the true RSSI gains per second (dB²/s), `measurementNoise` the variance of one reading (dB²).
    case kalman(processNoise: Double, measurementNoise: Double)
    /// Auto-regressive moving average: `x += coefficient · (reading − x)` per reading, with the
    /// state kept in floating point. (The Android Beacon Library truncates it to an integer each
    /// step, which biases it 4–5 dB toward strong readings; this one does not.)
    case arma(coefficient: Double)
    /// The mean of the readings in the last `window` seconds after dropping the `trim` fraction
    /// at each end (AltBeacon's RunningAverageRssiFilter: 20 s, 10 %).
    case trimmedMean(window: Double, trim: Double)

    public static let defaultKalman = RSSIFilterKind.kalman(processNoise: 0.2, measurementNoise: 32)
    public static let defaultARMA = RSSIFilterKind.arma(coefficient: 0.1)
    public static let altBeaconRunningAverage = RSSIFilterKind.trimmedMean(window: 20, trim: 0.1)

    public var description: String {
        switch self {
        case let .kalman(q, r): "kalman(q=\(q) dB²/s, r=\(r) dB²)"
        case let .arma(c): "arma(c=\(c))"
        case let .trimmedMean(w, t): "trimmed-mean(\(w) s, \(Int(t * 100)) %)"
        }
    }
}

/// The running state of one beacon's RSSI filter. Time is a parameter: the same readings at
/// the same times always give the same output.
public struct RSSIFilter: Sendable {
    public let kind: RSSIFilterKind
    private var estimate: Double = 0
    private var variance: Double = 0
    private var lastTime: Double = 0
    private var started = false
    /// Trimmed mean only: readings in the window, oldest first.
    private var window: [(time: Double, rssi: Double)] = []

    /// Takes the filter's constants as given, except that out-of-range ones are brought into
    /// range so the filter cannot misbehave: Kalman noises and the ARMA coefficient must be
    /// positive (ARMA at most 1), the trimmed mean's window positive and its trim in [0, 0.45].
    public init(_ kind: RSSIFilterKind) {
        switch kind {
        case let .kalman(q, r):
            self.kind = .kalman(processNoise: q > 0 && q.isFinite ? q : 0.2, measurementNoise: r > 0 && r.isFinite ? r : 32)
        case let .arma(c):
            self.kind = .arma(coefficient: c > 0 && c <= 1 ? c : 0.1)
        case let .trimmedMean(window, trim):
            self.kind = .trimmedMean(window: window > 0 && window.isFinite ? window : 20, trim: trim >= 0 && trim <= 0.45 ? trim : 0.1)
        }
    }

    /// The current filtered value; nil before the first reading.
    public var value: Double? { started ? estimate : nil }

    /// The variance of the filtered value around the readings' true mean (dB²), when single
    /// readings scatter with variance `readingVariance`: the Kalman filter's posterior variance
    /// rescaled from its assumed measurement noise to the observed one, an ARMA filter's
    /// `c / (2 − c)` of it, a trimmed mean's `1 / count`.
    public func estimateVariance(readingVariance: Double) -> Double {
        guard started else { return .infinity }
        switch kind {
        case let .kalman(_, measurementNoise): return variance * readingVariance / measurementNoise
        case let .arma(coefficient): return readingVariance * coefficient / (2 - coefficient)
        case .trimmedMean: return readingVariance / Double(max(1, window.count))
        }
    }

    /// Adds a reading in dBm taken at `time` seconds and returns the filtered RSSI.
    public mutating func update(_ rssi: Double, at time: Double) -> Double {
        switch kind {
        case let .kalman(processNoise, measurementNoise):
            if !started {
                estimate = rssi
                variance = measurementNoise
            } else {
                let elapsed = max(0, time - lastTime)
                let predicted = variance + processNoise * elapsed
                let gain = predicted / (predicted + measurementNoise)
                estimate += gain * (rssi - estimate)
                variance = (1 - gain) * predicted
            }
        case let .arma(coefficient):
            estimate = started ? estimate + coefficient * (rssi - estimate) : rssi
        case let .trimmedMean(length, trim):
            window.append((time, rssi))
            let cutoff = time - length
            if let firstKept = window.firstIndex(where: { $0.time > cutoff }), firstKept > 0 {
                window.removeFirst(firstKept)
            }
            let sorted = window.map(\.rssi).sorted()
            let drop = Int(Double(sorted.count) * trim)
            let kept = sorted[drop..<(sorted.count - drop)]
            estimate = kept.isEmpty ? rssi : kept.reduce(0, +) / Double(kept.count)
        }
        started = true
        lastTime = time
        return estimate
    }
}
