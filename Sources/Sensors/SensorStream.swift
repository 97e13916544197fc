/// The async sequence every sensor delivers: samples in order, until the consumer stops
/// iterating (which stops the sensor), the source ends, or it fails with a ``SensorError``.
///
/// Underneath, the reading thread hands over whole batches (everything one read produced), so
/// a buffered accelerometer delivering thousands of samples per read costs one hand-over, not
/// thousands. The iterator is inlinable so that it specializes in the consumer's module: an
/// unspecialized generic `next()` per sample would cost more than reading the sample.
public struct SensorStream<Element: Sendable>: AsyncSequence, Sendable {
    @usableFromInline let batches: AsyncThrowingStream<[Element], Error>

    init(batches: AsyncThrowingStream<[Element], Error>) { self.batches = batches }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: batches.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline var base: AsyncThrowingStream<[Element], Error>.AsyncIterator
        @usableFromInline var batch: [Element] = []
        @usableFromInline var index = 0

        @inlinable
        init(base: AsyncThrowingStream<[Element], Error>.AsyncIterator) { self.base = base }

        /// The next sample, on the caller's actor: no executor hop per sample.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(any Error) -> Element? {
            while index == batch.count {
                guard let next = try await base.next(isolation: actor) else { return nil }
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
