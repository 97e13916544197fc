import Foundation

/// Fans committed events out to live subscribers (the WebSocket connections), per player.
/// Delivery here is best effort: the durable copy is the event feed in the database, which a
/// subscriber reads after its last cursor to fill any gap.
public final class EventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [Int64: [UUID: AsyncStream<LobbyEvent>.Continuation]] = [:]

    public init() {}

    /// A stream of the events of `playerId` committed from now on; it ends when the caller stops
    /// iterating or drops it.
    public func subscribe(playerId: Int64) -> AsyncStream<LobbyEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<LobbyEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.subscribers[playerId]?.removeValue(forKey: id) }
        }
        lock.withLock { subscribers[playerId, default: [:]][id] = continuation }
        return stream
    }

    /// Live subscriptions open now (the WebSocket clients).
    public var subscriberCount: Int { lock.withLock { subscribers.values.reduce(0) { $0 + $1.count } } }

    func publish(_ events: [(playerId: Int64, event: LobbyEvent)]) {
        guard !events.isEmpty else { return }
        let targets = lock.withLock { events.map { (subscribers[$0.playerId].map { Array($0.values) } ?? [], $0.event) } }
        for (continuations, event) in targets {
            for continuation in continuations { continuation.yield(event) }
        }
    }
}
