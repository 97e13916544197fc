import BeaconFrames

/// A source of received advertisements: a radio, or a recording of one.
///
/// Every backend yields the same ``Advertisement`` values, so nothing downstream knows which one
/// it has. Iterate the stream to scan; cancel the iterating task (or stop iterating) to stop,
/// which also releases the radio.
public protocol Scanner: Sendable {
    /// Advertisements in the order received. `time` counts seconds from the start of this scan
    /// (for replays, the recording's own times). The stream ends when the source is exhausted and
    /// throws only on failures the backend cannot recover from.
    func advertisements() -> AsyncThrowingStream<Advertisement, any Error>
}
