import Foundation

/// Where the lobby reads the time. Rules that depend on time (expiry, cooldowns, "seen in the last
/// ten minutes") take it from here, so tests move time instead of sleeping.
public protocol LobbyClock: Sendable {
    func now() -> Date
}

/// The wall clock.
public struct SystemClock: LobbyClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests and simulations.
public final class ManualClock: LobbyClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    public func now() -> Date {
        lock.withLock { current }
    }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }
}
