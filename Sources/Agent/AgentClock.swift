import Foundation
import Radio

/// The agent's time, injected once and handed to every piece that keeps time (as the proximity
/// pipeline takes its clock), so a test can drive the agent's timers and stamps without waiting.
///
/// Two readings of one source: wall-clock dates for what is stamped and compared with the
/// lobby's times (sightings, peer readings, rotation periods), and a monotonic clock for timers
/// and the pipeline's ticks, which a step of the wall clock (NTP setting it at boot) must
/// neither fire early nor stall.
public struct AgentClock: Sendable {
    /// The wall-clock time now.
    public let wallTime: @Sendable () -> Date
    /// What timers sleep on and the proximity pipeline ticks on.
    public let timer: any Clock<Duration>

    public init(wallTime: @escaping @Sendable () -> Date, timer: any Clock<Duration>) {
        self.wallTime = wallTime
        self.timer = timer
    }

    /// The system's: `Date()` and `ContinuousClock`.
    public static let system = AgentClock(wallTime: { Date() }, timer: ContinuousClock())

    /// The wall-clock time now.
    public var now: Date { wallTime() }

    /// Sleeps for `duration` on ``timer``; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await timer.sleep(for: duration)
    }

    /// Sleeps for `backoff`'s current delay on ``timer`` and doubles it (``Backoff/wait()`` on
    /// this clock).
    public func wait(_ backoff: inout Backoff) async throws {
        let delay = backoff.delay
        backoff.advance()
        try await sleep(for: delay)
    }
}
