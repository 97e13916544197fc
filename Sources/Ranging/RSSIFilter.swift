/// Which RSSI filter smooths a beacon's readings, with its constants.
public enum RSSIFilterKind: Sendable, Hashable, CustomStringConvertible {
    /// A one-dimensional Kalman filter on a random-walk signal. `processNoise` is the variance
    /// the true RSSI gains per second (dB²/s), `measurementNoise` the variance of one reading (dB²).
    case kalman(processNoise: Double, measurementNoise: Double)
    /// The Kalman filter above, which holds a still beacon steady, with a fast one beside it
    /// (process noise `movingProcessNoise` dB²/s) that tells moving from still: when the fast
    /// estimate stays on one side of the slow one by more than ``RSSIFilter/movementSigmas`` of
    /// its own standard deviations for ``RSSIFilter/movementReadings`` readings and
    /// ``RSSIFilter/movementSeconds`` seconds, the beacon is taken to be moving and the slow filter
    /// restarts from the fast one's state. Its value is the slow filter's.
    case following(processNoise: Double, measurementNoise: Double, movingProcessNoise: Double)
    /// Auto-regressive moving average: `x += coefficient · (reading − x)` per reading, with the
    /// state kept in floating point. (The Android Beacon Library truncates it to an integer each
    /// step, which biases it 4–5 dB toward strong readings; this one does not.)
    case arma(coefficient: Double)
    /// The mean of the readings in the last `window` seconds after dropping the `trim` fraction
    /// at each end (AltBeacon's RunningAverageRssiFilter: 20 s, 10 %).
    case trimmedMean(window: Double, trim: Double)

    public static let defaultKalman = RSSIFilterKind.kalman(processNoise: 0.2, measurementNoise: 32)
    /// The default: today's Kalman filter, followed by a fast one at 20 dB²/s (Benchmarks/ranging.md).
    public static let defaultFollowing = RSSIFilterKind.following(processNoise: 0.2, measurementNoise: 32, movingProcessNoise: 20)
    public static let defaultARMA = RSSIFilterKind.arma(coefficient: 0.1)
    public static let altBeaconRunningAverage = RSSIFilterKind.trimmedMean(window: 20, trim: 0.1)

    public var description: String {
        switch self {
        case let .kalman(q, r): "kalman(q=\(q) dB²/s, r=\(r) dB²)"
        case let .following(q, r, moving): "following(q=\(q) dB²/s, moving q=\(moving) dB²/s, r=\(r) dB²)"
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
    /// Following only: the fast filter's estimate and variance, and how long it has disagreed
    /// with the slow one (readings, since when, on which side).
    private var fastEstimate: Double = 0
    private var fastVariance: Double = 0
    private var disagreeingSince: Double = 0
    private var disagreeingReadings = 0
    private var fastIsAbove = false
    /// Following only: how often the slow filter restarted from the fast one.
    public private(set) var restarts = 0

    /// Following: how many of the fast filter's standard deviations (from its own variance, with
    /// the assumed measurement noise) its estimate must be from the slow one's to disagree.
    /// At 10 Hz with 20 dB²/s the fast filter's variance settles near 7 dB², so the bound is
    /// about 8 dB; at 1 Hz, about 12 dB.
    public static let movementSigmas = 3.0
    /// Following: the disagreement must last this many readings, one side all along...
    public static let movementReadings = 3
    /// ...and this many seconds, so that a fade of a second or two (a hand, a body passing) does
    /// not count as movement: with 1 s, the pcng recordings' still segments (phones in pockets)
    /// changed zone half as often again as with the slow filter alone (Benchmarks/ranging.md).
    public static let movementSeconds = 2.0

    /// Takes the filter's constants as given, except that out-of-range ones are brought into
    /// range so the filter cannot misbehave: Kalman noises and the ARMA coefficient must be
    /// positive (ARMA at most 1), the trimmed mean's window positive and its trim in [0, 0.45].
    public init(_ kind: RSSIFilterKind) {
        switch kind {
        case let .kalman(q, r):
            self.kind = .kalman(processNoise: q > 0 && q.isFinite ? q : 0.2, measurementNoise: r > 0 && r.isFinite ? r : 32)
        case let .following(q, r, moving):
            let slow = q > 0 && q.isFinite ? q : 0.2
            self.kind = .following(processNoise: slow, measurementNoise: r > 0 && r.isFinite ? r : 32,
                                   movingProcessNoise: moving > slow && moving.isFinite ? moving : max(20, slow))
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
        case let .kalman(_, measurementNoise), let .following(_, measurementNoise, _):
            return variance * readingVariance / measurementNoise
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
                Self.kalmanStep(&estimate, &variance, rssi, after: max(0, time - lastTime), processNoise, measurementNoise)
            }
        case let .following(processNoise, measurementNoise, movingProcessNoise):
            if !started {
                estimate = rssi
                variance = measurementNoise
                fastEstimate = rssi
                fastVariance = measurementNoise
            } else {
                let elapsed = max(0, time - lastTime)
                Self.kalmanStep(&estimate, &variance, rssi, after: elapsed, processNoise, measurementNoise)
                Self.kalmanStep(&fastEstimate, &fastVariance, rssi, after: elapsed, movingProcessNoise, measurementNoise)
                followMovement(at: time)
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

    /// One step of a Kalman filter on a random walk: predicts `elapsed` seconds ahead, then takes
    /// the reading in.
    @inline(__always)
    private static func kalmanStep(_ estimate: inout Double, _ variance: inout Double, _ rssi: Double, after elapsed: Double,
                                   _ processNoise: Double, _ measurementNoise: Double) {
        let predicted = variance + processNoise * elapsed
        let gain = predicted / (predicted + measurementNoise)
        estimate += gain * (rssi - estimate)
        variance = (1 - gain) * predicted
    }

    /// Following: restarts the slow filter from the fast one when they have disagreed long enough.
    @inline(__always)
    private mutating func followMovement(at time: Double) {
        let gap = fastEstimate - estimate
        let limit = Self.movementSigmas * Self.movementSigmas * fastVariance
        guard gap * gap > limit else {
            disagreeingReadings = 0
            return
        }
        if disagreeingReadings == 0 || fastIsAbove != (gap > 0) {
            disagreeingReadings = 0
            disagreeingSince = time
            fastIsAbove = gap > 0
        }
        disagreeingReadings += 1
        if disagreeingReadings >= Self.movementReadings, time - disagreeingSince >= Self.movementSeconds {
            estimate = fastEstimate
            variance = fastVariance
            disagreeingReadings = 0
            restarts += 1
        }
    }
}
