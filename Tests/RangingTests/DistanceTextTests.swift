import Ranging
import Testing

/// Distances as people read them, written in one place for the terminal views and the agent.
struct DistanceTextTests {
    @Test func anEstimateWithItsIntervalInTenths() {
        #expect(DistanceText.estimate(2.14, low: 1.36, high: 3.24) == "2.1 m (1.4–3.2)")
        #expect(DistanceText.estimate(12.44, low: 8.44, high: 17.21) == "12.4 m (8.4–17.2)")
        #expect(DistanceText.estimate(0.04, interval: 0.01...0.09) == "0.0 m (0.0–0.1)")
    }

    /// The terminal tables drop the tenths from 10 m on, number by number.
    @Test func wholeMetresFromALimit() {
        #expect(DistanceText.estimate(12.44, interval: 8.44...17.21, wholeMetresFrom: 10) == "12 m (8.4–17)")
        #expect(DistanceText.estimate(9.94, interval: nil, wholeMetresFrom: 10) == "9.9 m")
        #expect(DistanceText.estimate(10, interval: nil, wholeMetresFrom: 10) == "10 m")
    }

    /// Half an interval is no interval.
    @Test func theIntervalNeedsBothEnds() {
        #expect(DistanceText.estimate(2, low: 1, high: nil) == "2.0 m")
        #expect(DistanceText.estimate(2, low: nil, high: 3) == "2.0 m")
    }

    @Test func aMeasuredDistanceKeepsTheDigitsItWasGivenWith() {
        #expect(DistanceText.measured(1) == "1 m")
        #expect(DistanceText.measured(0.5) == "0.5 m")
        #expect(DistanceText.measured(2.25) == "2.25 m")
    }
}
