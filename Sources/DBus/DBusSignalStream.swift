import Synchronization

/// The signals of one subscription, in the order they arrived (see
/// ``DBusConnection/signals(matching:bufferLimit:)``).
///
/// The connection's thread hands over everything one socket read brought in a single step, and
/// the reader takes the whole backlog in one step too: at a thousand BlueZ updates a second that
/// is one lock and one task wake-up per burst instead of one per signal. Ending the iteration,
/// cancelling the reading task or dropping the stream ends the subscription.
public struct DBusSignalStream: AsyncSequence, Sendable {
    public typealias Element = DBusMessage
    public typealias Failure = any Error

    let queue: SignalQueue
    /// Ends the subscription when the last copy of the stream and its iterators is gone.
    private let lifetime: Lifetime

    init(queue: SignalQueue) {
        self.queue = queue
        lifetime = Lifetime(queue: queue)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(queue: queue, lifetime: lifetime)
    }

    /// Everything that arrived since the last call, waiting for at least one signal: what a
    /// socket read brought, for a reader that passes signals on a batch at a time. Nil once the
    /// subscription has ended; throws why the connection dropped, as iterating does.
    ///
    /// Unlike iterating, cancelling the waiting task only stops the wait (it throws
    /// `CancellationError`) and leaves the subscription running, so tasks can take turns
    /// reading one subscription. Do not mix with iterating the same stream.
    public func takeBatch() async throws -> [DBusMessage]? {
        try await queue.take(endingOnCancellation: false)
    }

    public struct Iterator: AsyncIteratorProtocol, Sendable {
        private let queue: SignalQueue
        private let lifetime: Lifetime
        private var batch: [DBusMessage] = []
        private var position = 0

        init(queue: SignalQueue, lifetime: Lifetime) {
            self.queue = queue
            self.lifetime = lifetime
        }

        /// The next signal; nil once the subscription has ended (the connection closed with
        /// ``DBusConnection/close()``, or the task was cancelled). Throws why the connection
        /// dropped otherwise.
        public mutating func next() async throws -> DBusMessage? {
            if position == batch.count {
                guard let more = try await queue.take() else { return nil }
                batch = more
                position = 0
            }
            defer { position += 1 }
            return batch[position]
        }
    }

    final class Lifetime: Sendable {
        let queue: SignalQueue
        init(queue: SignalQueue) { self.queue = queue }
        deinit { queue.finish() }
    }
}

/// The hand-over point between the connection's thread (``deliver(_:)``) and one reader
/// (``take()``).
final class SignalQueue: Sendable {
    private struct State {
        var pending: [DBusMessage] = []
        var waiting: CheckedContinuation<[DBusMessage]?, any Error>?
        /// Nil while the subscription lasts; then `.success` for a clean end, or the error to throw.
        var ending: Result<Void, any Error>?
        var endingReported = false
    }

    private let state = Mutex(State())
    private let limit: Int
    /// Runs once, when the subscription ends for any reason.
    private let onEnd: @Sendable () -> Void

    init(limit: Int, onEnd: @escaping @Sendable () -> Void) {
        self.limit = max(1, limit)
        self.onEnd = onEnd
    }

    /// Appends signals for the reader; beyond the limit the oldest are dropped. Loop thread only.
    func deliver(_ messages: [DBusMessage]) {
        guard !messages.isEmpty else { return }
        let kept = messages.count <= limit ? messages : Array(messages.suffix(limit))
        let reader: CheckedContinuation<[DBusMessage]?, any Error>? = state.withLock { state in
            guard state.ending == nil else { return nil }
            if let waiting = state.waiting {
                // A reader only waits when nothing is pending.
                state.waiting = nil
                return waiting
            }
            state.pending.append(contentsOf: kept)
            if state.pending.count > limit { state.pending.removeFirst(state.pending.count - limit) }
            return nil
        }
        reader?.resume(returning: kept)
    }

    /// Ends the subscription: the reader gets what is queued, then nil (or `error`).
    func finish(throwing error: (any Error)? = nil) {
        let (reader, first): (CheckedContinuation<[DBusMessage]?, any Error>?, Bool) = state.withLock { state in
            guard state.ending == nil else { return (nil, false) }
            state.ending = error.map { .failure($0) } ?? .success(())
            defer { state.waiting = nil }
            if state.waiting != nil, error != nil { state.endingReported = true }
            return (state.waiting, true)
        }
        if let reader {
            // Nothing is pending while a reader waits.
            if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
        }
        if first { onEnd() }
    }

    /// Everything queued, waiting for at least one signal; nil once ended. Cancellation ends the
    /// subscription, or with `endingOnCancellation` false only this wait.
    func take(endingOnCancellation: Bool = true) async throws -> [DBusMessage]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<[DBusMessage]?, any Error>? = state.withLock { state in
                    if !state.pending.isEmpty {
                        defer { state.pending = [] }
                        return .success(state.pending)
                    }
                    switch state.ending {
                    case nil:
                        guard state.waiting == nil else {
                            return .failure(DBusError(name: DBusError.failedName, message:
                                "a signal stream was read by two tasks at once; give each task its own subscription"))
                        }
                        // The flag is set before the cancellation handler runs: either that
                        // handler finds this waiter, or this sees the flag.
                        if !endingOnCancellation, Task.isCancelled { return .failure(CancellationError()) }
                        state.waiting = continuation
                        return nil
                    case .success:
                        return .success(nil)
                    case .failure(let error):
                        // The error is thrown once; later calls see the end.
                        if state.endingReported { return .success(nil) }
                        state.endingReported = true
                        return .failure(error)
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            if endingOnCancellation { finish() } else { abandonWait() }
        }
    }

    /// Fails the waiting reader with `CancellationError`, leaving the subscription running.
    private func abandonWait() {
        let reader = state.withLock { state in
            defer { state.waiting = nil }
            return state.waiting
        }
        reader?.resume(throwing: CancellationError())
    }
}
