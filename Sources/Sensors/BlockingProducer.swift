import Foundation
import Synchronization

/// Runs a blocking read loop on a thread of its own, so that sensor reads never block Swift's
/// cooperative pool, and hands the batches it reads to a ``SensorStream``.
///
/// The loop gets a ``StopSignal``; it must check it at least every ~100 ms (between reads, or
/// through `poll` timeouts). The stream finishing or being cancelled sets the signal; the loop
/// returning (or throwing) finishes the stream, and only then marks the stream finished
/// (``SensorStream/finished()``), so whoever awaits that knows the loop's own cleanup (closing
/// the device, disabling the IIO buffer) has run.
enum BlockingProducer {
    /// `loop` calls its `emit` argument with each batch it reads.
    static func stream<Element: Sendable>(
        name: String,
        _ loop: @escaping @Sendable (StopSignal, _ emit: ([Element]) -> Void) throws -> Void
    ) -> SensorStream<Element> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Element].self)
        let stop = StopSignal()
        let backlog = Backlog()
        let done = Completion()
        continuation.onTermination = { _ in stop.request() }
        let thread = Thread {
            defer { done.complete() }
            do {
                try loop(stop) { batch in
                    guard !batch.isEmpty, backlog.waitForRoom(stop: stop) else { return }
                    continuation.yield(batch)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = name
        thread.start()
        return SensorStream(batches: stream, stopSignal: stop, backlog: backlog, completion: done)
    }
}

/// A flag the consumer side sets to ask a blocking loop to end.
final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)

    func request() { flag.store(true, ordering: .relaxed) }

    var isRequested: Bool { flag.load(ordering: .relaxed) }

    /// Sleeps up to `seconds`, waking early (in 20 ms steps) when a stop is requested.
    /// Returns false when stopped.
    func sleep(seconds: Double) -> Bool {
        guard seconds.isFinite else { return !isRequested }
        let deadline = monotonicSeconds() + seconds
        while !isRequested {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return true }
            usleep(UInt32(min(remaining, 0.02) * 1_000_000))
        }
        return false
    }
}

/// Set once when a reading thread has returned; wakes everyone waiting for it.
final class Completion: Sendable {
    private let state = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func complete() {
        let waiters = state.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    var isComplete: Bool { state.withLock { $0.done } }
}
