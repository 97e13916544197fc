import Minigames
import Sensors
import Synchronization

/// Collects a live round's samples from the sensor tasks, with times moved to seconds since the
/// round started.
///
/// Each stream has its own clock (IIO timestamps, capture time, file times). Every sample is
/// noted with its arrival on CLOCK_MONOTONIC; the least-delayed sample of a stream (smallest
/// arrival − sample time) ties that stream's clock to the round's, so a consumer that fell
/// behind for a while does not shift the samples.
final class RoundRecorder: Sendable {
    private struct State {
        var accelerations: [(sample: AccelerationSample, arrival: Double)] = []
        var levels: [(sample: LevelSample, arrival: Double)] = []
        var failure: (any Error)?
    }

    private let start: Double
    private let state = Mutex(State())

    init(start: Double) { self.start = start }

    /// Notes `sample`, which arrived at `arrival` (CLOCK_MONOTONIC seconds; now by default).
    func add(_ sample: AccelerationSample, arrival: Double = monotonicSeconds()) {
        state.withLock { $0.accelerations.append((sample, arrival)) }
    }

    /// Notes `level`, which arrived at `arrival` (CLOCK_MONOTONIC seconds; now by default).
    func add(_ level: LevelSample, arrival: Double = monotonicSeconds()) {
        state.withLock { $0.levels.append((level, arrival)) }
    }

    /// Records why a sensor stopped delivering.
    func fail(_ error: any Error) { state.withLock { $0.failure = $0.failure ?? error } }

    var failure: (any Error)? { state.withLock { $0.failure } }

    var latest: (LevelSample?, AccelerationSample?) {
        state.withLock { ($0.levels.last?.sample, $0.accelerations.last?.sample) }
    }

    func recording(game: MinigameName, plan: RoundPlan, calibration: SensorCalibration) -> RoundRecording {
        state.withLock { state in
            let accelerationOffset = state.accelerations.map { $0.arrival - $0.sample.time }.min() ?? 0
            let levelOffset = state.levels.map { $0.arrival - $0.sample.time }.min() ?? 0
            let accelerations = state.accelerations.map { entry in
                var moved = entry.sample
                moved.time += accelerationOffset - start
                return moved
            }
            let levels = state.levels.map { entry in
                var moved = entry.sample
                moved.time += levelOffset - start
                return moved
            }
            return RoundRecording(game: game, duration: plan.duration, signalTime: plan.signalTime,
                                  levels: levels.filter { $0.time >= 0 }, accelerations: accelerations.filter { $0.time >= 0 },
                                  calibration: calibration)
        }
    }
}
