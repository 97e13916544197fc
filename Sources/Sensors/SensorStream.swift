import Glibc
import Synchronization

/// The async sequence every sensor delivers: samples in order, until the consumer stops
/// iterating (which stops the sensor), the source ends, or it fails with a ``SensorError``.
///
/// Underneath, the reading thread hands over whole batches (everything one read produced), so
/// a buffered accelerometer delivering thousands of samples per read costs one hand-over, not
/// thousands. The iterator is inlinable so that it specializes in the consumer's module: an
/// unspecialized generic `next()` per sample would cost more than reading the sample.
public struct SensorStream<Element: Sendable>: AsyncSequence, Sendable {
    @usableFromInline let batches: AsyncThrowingStream<[Element], Error>
    let stopSignal: StopSignal
    @usableFromInline let backlog: Backlog

    init(batches: AsyncThrowingStream<[Element], Error>, stopSignal: StopSignal, backlog: Backlog) {
        self.batches = batches
        self.stopSignal = stopSignal
        self.backlog = backlog
    }

    /// Asks the sensor to stop reading. Unlike cancelling the consuming task, this drops
    /// nothing: the samples already read are still delivered, then the sequence ends (within
    /// ~200 ms, the longest a read waits).
    public func stop() { stopSignal.request() }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: batches.makeAsyncIterator(), backlog: backlog)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline var base: AsyncThrowingStream<[Element], Error>.AsyncIterator
        @usableFromInline let backlog: Backlog
        @usableFromInline var batch: [Element] = []
        @usableFromInline var index = 0

        @inlinable
        init(base: AsyncThrowingStream<[Element], Error>.AsyncIterator, backlog: Backlog) {
            self.base = base
            self.backlog = backlog
        }

        /// The next sample, on the caller's actor: no executor hop per sample.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(any Error) -> Element? {
            while index == batch.count {
                guard let next = try await base.next(isolation: actor) else { return nil }
                backlog.taken()
                batch = next
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }

        @inlinable
        public mutating func next() async throws -> Element? {
            try await next(isolation: nil)
        }
    }
}

/// How many batches the reading thread has handed over that the consumer has not taken yet.
///
/// The thread waits while there are ``limit`` of them, so a source faster than its consumer (a
/// file, an ALSA file PCM) cannot fill memory, and ``SensorStream/stop()`` leaves little to
/// drain. A real sensor never waits here unless its consumer stalls, and then the kernel's
/// buffer overruns as it would without us.
@usableFromInline
final class Backlog: Sendable {
    static let limit = 16
    private let count = Atomic<Int>(0)

    init() {}

    /// Called by the consumer for every batch it takes.
    @usableFromInline
    func taken() { count.subtract(1, ordering: .relaxed) }

    /// Called by the reading thread before handing over a batch; false when stopped while waiting.
    func waitForRoom(stop: StopSignal) -> Bool {
        while count.load(ordering: .relaxed) >= Self.limit {
            if stop.isRequested { return false }
            usleep(500)
        }
        count.add(1, ordering: .relaxed)
        return true
    }
}
