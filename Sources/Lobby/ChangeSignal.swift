import Synchronization

/// Tells watchers that something was committed, without saying what: the location screens wait
/// on it to read their location again within moments of a score instead of polling the database
/// many times a second. Each watcher's stream keeps at most one pending signal, so a burst of
/// writes wakes it once; a watcher reads what it shows and compares.
///
/// Only writes of this instance signal: with several instances on PostgreSQL a watcher also reads
/// again on a timer of its own (``LocationScreen`` does every second).
public final class ChangeSignal: Sendable {
    private let watchers = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])
    private let nextId = Atomic<Int>(0)

    public init() {}

    /// A stream that yields after each commit (at most one signal pending); it ends its watch
    /// when the consuming task is done with it.
    public func watch() -> AsyncStream<Void> {
        let id = nextId.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
        watchers.withLock { $0[id] = continuation }
        return stream
    }

    /// Wakes every watcher.
    func signal() {
        watchers.withLock { watchers in
            for continuation in watchers.values { continuation.yield() }
        }
    }

    /// How many watch now (for tests and `/metrics`).
    public var watcherCount: Int { watchers.withLock { $0.count } }
}
