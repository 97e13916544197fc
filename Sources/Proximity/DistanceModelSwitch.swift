import Ranging
import Synchronization

/// A distance model that may change while a ``LiveProximity`` runs: the agent sets it when it
/// comes within range of a location whose site profile says how fast RSSI falls there, and sets
/// it back when it leaves. The pipeline's loop looks at it before each batch of advertisements
/// and each tick: a lock and a comparison, nothing per advertisement.
public final class DistanceModelSwitch: Sendable {
    private let state: Mutex<(model: DistanceModel, generation: UInt64)>

    public init(_ model: DistanceModel) {
        state = Mutex((model, 0))
    }

    /// The model ranging uses now.
    public var model: DistanceModel { state.withLock { $0.model } }

    /// Ranges with `model` from the pipeline's next batch on.
    public func set(_ model: DistanceModel) {
        state.withLock {
            guard $0.model != model else { return }
            $0 = (model, $0.generation &+ 1)
        }
    }

    /// The model, when it changed since `seen`; `seen` then moves on.
    func changed(since seen: inout UInt64) -> DistanceModel? {
        state.withLock {
            guard $0.generation != seen else { return nil }
            seen = $0.generation
            return $0.model
        }
    }
}
