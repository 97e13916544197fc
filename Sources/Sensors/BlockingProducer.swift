import Foundation
import Synchronization

/// Runs a blocking read loop on a thread of its own, so that sensor reads never block Swift's
/// cooperative pool, and hands the batches it reads to a ``SensorStream``.
///
/// The loop gets a ``StopSignal``; it must check it at least every ~100 ms (between reads, or
/// through `poll` timeouts). The stream finishing or being cancelled sets the signal; the loop
/// returning (or throwing) finishes the stream.
enum BlockingProducer {
    /// `loop` calls its `emit` argument with each batch it reads.
    static func stream<Element: Sendable>(
        name: String,
        _ loop: @escaping @Sendable (StopSignal, _ emit: ([Element]) -> Void) throws -> Void
    ) -> SensorStream<Element> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Element].self)
        let stop = StopSignal()
        let backlog = Backlog()
        continuation.onTermination = { _ in stop.request() }
        let thread = Thread {
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
        return SensorStream(batches: stream, stopSignal: stop, backlog: backlog)
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
        let deadline = monotonicSeconds() + seconds
        while !isRequested {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return true }
            usleep(UInt32(min(remaining, 0.02) * 1_000_000))
        }
        return false
    }
}
