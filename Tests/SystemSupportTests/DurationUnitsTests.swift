import SystemSupport
import Testing

/// `Duration` in seconds and whole units, as controllers, BlueZ, poll(2) and metrics take it.
@Suite struct DurationUnitsTests {
    @Test func wholeUnitsTruncate() {
        let duration = Duration.seconds(2) + .nanoseconds(1_999_999)
        #expect(duration.wholeMilliseconds == 2_001)
        #expect(duration.wholeMicroseconds == 2_001_999)
        #expect(duration.wholeNanoseconds == 2_001_999_999)
        #expect(Duration.nanoseconds(999).wholeMicroseconds == 0)
        #expect(Duration.milliseconds(-1500).wholeMilliseconds == -1_500)
    }

    /// Correctly rounded: 9 ms is the `Double` nearest 0.009 (multiplying by 1e-18 gave the
    /// next one up, printed 0.009000000000000001).
    @Test func secondsAreTheNearestDouble() {
        #expect(Duration.milliseconds(9).inSeconds == 0.009)
        #expect(String(Duration.milliseconds(9).inSeconds) == "0.009")
        #expect(Duration.milliseconds(2500).inSeconds == 2.5)
        #expect(Duration.seconds(7).inSeconds == 7)
    }
}
