/// Waits that double after each failure, from `first` up to `limit`, so a missing bus or hub is
/// retried promptly at first and then without hammering it.
struct Backoff {
    let first: Duration
    let limit: Duration
    private(set) var delay: Duration

    /// The BlueZ backends use the defaults, 0.25 s up to 8 s.
    init(first: Duration = .milliseconds(250), limit: Duration = .seconds(8)) {
        self.first = first
        self.limit = max(first, limit)
        delay = first
    }

    mutating func reset() { delay = first }

    /// Doubles the delay without sleeping (for an actor that sleeps outside its own state).
    mutating func advance() { delay = min(delay * 2, limit) }

    /// Sleeps for the current delay and doubles it. Throws on cancellation.
    mutating func wait() async throws {
        let current = delay
        delay = min(delay * 2, limit)
        try await Task.sleep(for: current)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
