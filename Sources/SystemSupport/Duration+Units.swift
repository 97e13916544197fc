/// A `Duration` in the units system calls, controllers, BlueZ and metrics take.
///
/// `Duration` keeps seconds and attoseconds apart; converting by hand was written six times, with
/// different divisors to get wrong. The whole-unit values truncate toward zero, as those copies
/// did; add one where a wait must never end early.
extension Duration {
    /// The duration in seconds, as a `Double` (attoseconds divided by 10¹⁸, which a `Double`
    /// holds exactly, so the result is correctly rounded).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, truncated.
    public var wholeMilliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// Whole microseconds, truncated.
    public var wholeMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }

    /// Whole nanoseconds, truncated.
    public var wholeNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
