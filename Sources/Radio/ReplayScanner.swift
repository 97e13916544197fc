import BeaconFrames

/// An ``AdvertisementScanner`` that replays recorded advertisements, as fast as possible or paced by their
/// recorded times.
public struct ReplayScanner: AdvertisementScanner {
    public enum Pacing: Sendable, Hashable {
        /// Yield everything at once, in order.
        case immediate
        /// Wait between advertisements as the recording did, sped up by `speed` (1: real time).
        case recorded(speed: Double)
    }

    private let recording: @Sendable () -> AnySequence<Advertisement>
    private let pacing: Pacing

    /// `recording` is iterated afresh by every call to ``advertisements()``.
    public init<Recording: Sequence & Sendable>(_ recording: Recording, pacing: Pacing = .immediate)
    where Recording.Element == Advertisement {
        self.recording = { AnySequence(recording) }
        self.pacing = pacing
    }

    public func scan(_ receive: (Advertisement) async -> Void) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        var firstTime: Double?
        for advertisement in recording() {
            if Task.isCancelled { return }
            if case .recorded(let speed) = pacing, speed > 0 {
                let origin = firstTime ?? advertisement.time
                firstTime = origin
                let offset = max(0, advertisement.time - origin) / speed
                do {
                    try await clock.sleep(until: start + .seconds(offset))
                } catch {
                    return
                }
            }
            await receive(advertisement)
        }
    }
}
