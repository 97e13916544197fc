import BeaconFrames

/// A source of received advertisements: a radio, or a recording of one.
///
/// Every backend yields the same ``Advertisement`` values, so nothing downstream knows which one
/// it has.
public protocol AdvertisementScanner: Sendable {
    /// Scans, handing each advertisement to `receive` in the order received, until the calling
    /// task is cancelled or the source is exhausted. On cancellation it releases the radio (stops
    /// discovery) before returning, so a caller that awaits it leaves nothing behind.
    ///
    /// `time` counts seconds from the start of this scan (for replays, the recording's own
    /// times). Throws only on failures the backend cannot recover from.
    func scan(_ receive: (Advertisement) async -> Void) async throws
}

extension AdvertisementScanner {
    /// The advertisements as a stream, scanning in a task of its own that ends when iteration
    /// stops. The radio is released shortly after; use ``scan(_:)`` to wait for that.
    public func advertisements() -> AsyncThrowingStream<Advertisement, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Advertisement, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(65_536))
        let task = Task {
            do {
                try await scan { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
