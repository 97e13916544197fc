import Ranging
import Testing

@Suite struct FilterTests {
    /// Noisy readings of a constant -70 dBm, 10 per second, deterministic.
    static func noisy(count: Int, mean: Double = -70, spread: Double = 6) -> [(time: Double, rssi: Double)] {
        var state: UInt64 = 12345
        return (0..<count).map { i in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let uniform = Double(state >> 11) / Double(1 << 53)
            return (Double(i) * 0.1, (mean + (uniform - 0.5) * 2 * spread).rounded())
        }
    }

    @Test(arguments: [RSSIFilterKind.defaultKalman, .defaultARMA, .altBeaconRunningAverage])
    func settlesOnTheTrueLevelOfANoisySignal(kind: RSSIFilterKind) {
        var filter = RSSIFilter(kind)
        var last = 0.0
        for reading in Self.noisy(count: 600) { last = filter.update(reading.rssi, at: reading.time) }
        #expect(abs(last + 70) < 1.5, "\(kind) ended at \(last)")
    }

    @Test(arguments: [RSSIFilterKind.defaultKalman, .defaultARMA])
    func followsAStepChange(kind: RSSIFilterKind) {
        var filter = RSSIFilter(kind)
        for i in 0..<100 { _ = filter.update(-60, at: Double(i) * 0.1) }
        var value = 0.0
        for i in 100..<400 { value = filter.update(-80, at: Double(i) * 0.1) }
        #expect(abs(value + 80) < 1, "\(kind) still at \(value) 30 s after the step")
    }

    /// The Android Beacon Library's ARMA filter keeps its state as an integer, truncating each
    /// step; on readings a little below the state it never moves down and reads several dB too
    /// strong. Ours keeps floating-point state and converges.
    @Test func armaKeepsFloatingPointState() {
        var filter = RSSIFilter(.arma(coefficient: 0.1))
        var truncated = -60
        _ = filter.update(-60, at: 0)
        var value = 0.0
        for i in 1...200 {
            value = filter.update(-65, at: Double(i))
            truncated = truncated - Int(Double(truncated - (-65)) * 0.1)  // Int() truncates toward zero
        }
        #expect(abs(value + 65) < 0.01)
        #expect(truncated >= -61, "the integer version stays stuck 4 dB or more too strong (at \(truncated))")
    }

    @Test func trimmedMeanDropsOutliersAndOldReadings() {
        var filter = RSSIFilter(.trimmedMean(window: 20, trim: 0.1))
        for i in 0..<18 { _ = filter.update(-70, at: Double(i)) }
        _ = filter.update(-20, at: 18)   // outlier: trimmed away
        let withOutlier = filter.update(-120, at: 19)  // outlier: trimmed away
        #expect(withOutlier == -70)
        // 25 s later only the new level is in the window.
        var value = 0.0
        for i in 45..<50 { value = filter.update(-50, at: Double(i)) }
        #expect(value == -50)
    }

    @Test func kalmanIsDeterministicForTheSameTimes() {
        let readings = Self.noisy(count: 200)
        func run() -> [Double] {
            var filter = RSSIFilter(.defaultKalman)
            return readings.map { filter.update($0.rssi, at: $0.time) }
        }
        #expect(run() == run())
    }
}
