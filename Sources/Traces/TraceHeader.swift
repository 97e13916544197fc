import Foundation

/// The first line of a trace v1 file: `{"nearplay_trace":1, "created":…, "source":…}` and any
/// further keys, kept as they were.
public struct TraceHeader: Sendable {
    public var version: Int
    public var created: String?
    public var source: String?
    /// The header line's JSON text, with every key, for tools that need more.
    public var json: String
    /// Scripted presence windows of simulated traces (`presence`), used by evaluation to measure
    /// enter and exit latency and false exits.
    public var presence: [PresenceWindow]

    public init(version: Int = 1, created: String? = nil, source: String? = nil, json: String = "{}", presence: [PresenceWindow] = []) {
        self.version = version
        self.created = created
        self.source = source
        self.json = json
        self.presence = presence
    }
}

/// When a simulated beacon was really transmitting: from `start` to `end` seconds.
public struct PresenceWindow: Sendable, Hashable, Codable {
    public var beacon: String
    public var start: Double
    public var end: Double

    public init(beacon: String, start: Double, end: Double) {
        self.beacon = beacon
        self.start = start
        self.end = end
    }
}
