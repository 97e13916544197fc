import Foundation

/// Fans committed events out to live subscribers (the WebSocket connections), per player.
/// Delivery here is best effort: the durable copy is the event feed in the database. A subscriber
/// that falls more than ``bufferSize`` events behind loses the oldest from its buffer, and its
/// ``EventSubscription/takeOverflow()`` says so: it then reads the feed after its last cursor, so
/// nothing is missed.
public final class EventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [Int64: [UUID: Subscriber]] = [:]
    /// Events held for one subscriber that has not taken them yet.
    public let bufferSize: Int

    private struct Subscriber {
        var continuation: AsyncStream<LobbyEvent>.Continuation
        var overflow: EventSubscription.Overflow
    }

    public init(bufferSize: Int = 1024) {
        self.bufferSize = bufferSize
    }

    /// The events of `playerId` committed from now on; the stream ends when the caller stops
    /// iterating or drops it.
    public func subscribe(playerId: Int64) -> EventSubscription {
        let id = UUID()
        let (stream, continuation) = AsyncStream<LobbyEvent>.makeStream(bufferingPolicy: .bufferingNewest(bufferSize))
        let overflow = EventSubscription.Overflow()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.subscribers[playerId]?.removeValue(forKey: id) }
        }
        lock.withLock { subscribers[playerId, default: [:]][id] = Subscriber(continuation: continuation, overflow: overflow) }
        return EventSubscription(stream: stream, overflow: overflow)
    }

    /// Whether `playerId` has a live subscription here.
    func hasSubscribers(_ playerId: Int64) -> Bool { lock.withLock { subscribers[playerId]?.isEmpty == false } }

    /// Tells every subscriber that events may have passed it by (the instance lost word of what
    /// others committed for a while): each marks an overflow and gets ``resynchronizing``, an event
    /// with cursor 0 that it never sends but that makes it read the feed after its last cursor.
    func resynchronize() {
        let all = lock.withLock { subscribers.values.flatMap(\.values) }
        for subscriber in all {
            subscriber.overflow.set()
            subscriber.continuation.yield(Self.resynchronizing)
        }
    }

    /// The marker ``resynchronize()`` sends: cursor 0 comes before every event, so no subscriber
    /// passes it on.
    static let resynchronizing = LobbyEvent(cursor: 0, at: Date(timeIntervalSince1970: 0), kind: .invitationReceived, data: EventData())

    /// Live subscriptions open now (the WebSocket clients).
    public var subscriberCount: Int { lock.withLock { subscribers.values.reduce(0) { $0 + $1.count } } }

    func publish(_ events: [(playerId: Int64, event: LobbyEvent)]) {
        guard !events.isEmpty else { return }
        let targets = lock.withLock { events.map { (subscribers[$0.playerId].map { Array($0.values) } ?? [], $0.event) } }
        for (subscribers, event) in targets {
            for subscriber in subscribers {
                if case .dropped = subscriber.continuation.yield(event) { subscriber.overflow.set() }
            }
        }
    }
}

/// One live subscription of ``EventHub``: its events, and whether some were dropped from its
/// buffer since the last look.
public struct EventSubscription: AsyncSequence, Sendable {
    public typealias Element = LobbyEvent
    let stream: AsyncStream<LobbyEvent>
    let overflow: Overflow

    public func makeAsyncIterator() -> AsyncStream<LobbyEvent>.Iterator { stream.makeAsyncIterator() }

    /// True once after events were dropped: read the feed after the last cursor handled before
    /// going on with the stream.
    public func takeOverflow() -> Bool { overflow.take() }

    final class Overflow: @unchecked Sendable {
        private let lock = NSLock()
        private var flag = false
        func set() { lock.withLock { flag = true } }
        func take() -> Bool { lock.withLock { defer { flag = false }; return flag } }
    }
}
