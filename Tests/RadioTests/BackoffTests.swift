import Radio
import Testing

/// The wait between reconnection attempts that every backend and the simulated air use.
@Suite struct BackoffTests {
    @Test func doublesUpToItsLimitAndResets() async throws {
        var backoff = Backoff(first: .milliseconds(1), limit: .milliseconds(5))
        var delays: [Duration] = []
        for _ in 0..<5 {
            delays.append(backoff.delay)
            try await backoff.wait()
        }
        #expect(delays == [.milliseconds(1), .milliseconds(2), .milliseconds(4), .milliseconds(5), .milliseconds(5)])
        backoff.reset()
        #expect(backoff.delay == .milliseconds(1))
    }

    /// Cancelling a client that waits to reconnect ends the wait at once: a wait deaf to
    /// cancellation would sleep its whole five minutes.
    @Test func cancellationEndsAWaitAtOnce() async throws {
        let started = ContinuousClock.now
        let waiting = Task {
            var backoff = Backoff(first: .seconds(300), limit: .seconds(300))
            try await backoff.wait()
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(started.duration(to: .now) < .seconds(120))
    }
}
