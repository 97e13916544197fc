import Foundation

/// Token buckets keyed by strings: each key may spend `burst` attempts at once, and earns one back
/// every `interval` seconds. Time is a parameter, so tests step it by hand.
public struct AttemptBuckets: Sendable {
    /// How many attempts a key may make at once, and how often it earns one back.
    public struct Limit: Sendable, Equatable {
        public var burst: Int
        /// Seconds per attempt earned back.
        public var interval: TimeInterval

        public init(burst: Int, interval: TimeInterval) {
            self.burst = burst
            self.interval = interval
        }
    }

    public let limit: Limit
    /// Keys beyond this many are pruned (full buckets first), so a sweep over many names or
    /// addresses cannot grow the table without bound.
    public let capacity: Int
    private var buckets: [String: (tokens: Double, at: TimeInterval)] = [:]

    public init(_ limit: Limit, capacity: Int = 100_000) {
        self.limit = limit
        self.capacity = capacity
    }

    /// Seconds until `key` may try again, or 0 when it may now.
    public func wait(_ key: String, now: TimeInterval) -> TimeInterval {
        let tokens = tokens(key, now: now)
        return tokens >= 1 ? 0 : (1 - tokens) * limit.interval
    }

    /// Spends one attempt of `key`.
    public mutating func spend(_ key: String, now: TimeInterval) {
        buckets[key] = (tokens(key, now: now) - 1, now)
        if buckets.count > capacity { prune(now: now) }
    }

    /// Gives `key` its whole burst back.
    public mutating func reset(_ key: String) { buckets[key] = nil }

    private func tokens(_ key: String, now: TimeInterval) -> Double {
        guard let bucket = buckets[key] else { return Double(limit.burst) }
        return min(Double(limit.burst), bucket.tokens + max(0, now - bucket.at) / limit.interval)
    }

    private mutating func prune(now: TimeInterval) {
        buckets = buckets.filter { tokens($0.key, now: now) < Double(limit.burst) }
        // Still full of partly spent buckets: forget the oldest half.
        if buckets.count > capacity {
            let cut = buckets.values.map(\.at).sorted()[buckets.count / 2]
            buckets = buckets.filter { $0.value.at > cut }
        }
    }
}

