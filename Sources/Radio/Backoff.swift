/// Waits that double after each failure, from `first` up to `limit`, so a missing bus, hub or
/// lobby is retried promptly at first and then without hammering it.
public struct Backoff: Sendable {
    public let first: Duration
    public let limit: Duration
    public private(set) var delay: Duration

    /// The BlueZ backends and the agent's lobby links use the defaults, 0.25 s up to 8 s.
    public init(first: Duration = .milliseconds(250), limit: Duration = .seconds(8)) {
        self.first = first
        self.limit = max(first, limit)
        delay = first
    }

    public mutating func reset() { delay = first }

    /// Doubles the delay without sleeping (for an actor that sleeps outside its own state).
    public mutating func advance() { delay = min(delay * 2, limit) }

    /// Sleeps for the current delay and doubles it. Throws on cancellation.
    public mutating func wait() async throws {
        let current = delay
        delay = min(delay * 2, limit)
        try await Task.sleep(for: current)
    }
}
