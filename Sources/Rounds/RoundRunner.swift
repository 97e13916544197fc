import Logging
import Minigames
import Sensors

/// Plays minigame rounds on the sensors a ``SensorSetup`` names, for the CLI's `practice` and
/// for the agent.
///
/// A round whose every sensor is a file is *recorded*: the files are read as fast as they can
/// be and the round runs on their own clock (each stream's times from its first sample), so a
/// busy machine can slow it down but not shift or cut it. Any other round is *live*: it runs on
/// the wall clock, and the samples are tied to it by ``RoundRecorder``.
public struct RoundRunner: Sendable {
    public var sensors: SensorSetup
    public var logger: Logger
    /// Seconds between two ``RoundProgress`` reports (on the round's clock).
    public var progressInterval = 0.05
    /// Seconds the sensors get to deliver what they already read once a live round is over,
    /// before their streams are cancelled.
    public var drainTimeout = 2.0

    public init(sensors: SensorSetup, logger: Logger = Logger(label: "nearplay.rounds")) {
        self.sensors = sensors
        self.logger = logger
    }

    /// Finds the sensors a round of `game` reads, without starting them; throws, naming the
    /// sensor, when one is missing, or the field when the setup is not valid. A microphone PCM
    /// is opened and closed once to check it.
    public func inputs(for game: any Minigame) throws(RoundError) -> RoundInputs {
        do {
            try sensors.validate()
        } catch {
            throw .invalidSetup(error)
        }
        let fromRecordings = (!game.sensors.contains(.accelerometer) || sensors.accelFile != nil)
            && (!game.sensors.contains(.microphone) || sensors.audioFile != nil)
        var inputs = RoundInputs(fromRecordings: fromRecordings)
        if game.sensors.contains(.accelerometer) {
            switch sensors.accelerometerInput(paced: !fromRecordings) {
            case .success(let input): inputs.accelerometer = input
            case .failure(let cause): throw .sensorUnavailable(game: game.name, sensor: .accelerometer, cause: cause)
            }
        }
        if game.sensors.contains(.microphone) {
            switch sensors.microphoneInput(paced: !fromRecordings) {
            case .success(let input): inputs.microphone = input
            case .failure(let cause): throw .sensorUnavailable(game: game.name, sensor: .microphone, cause: cause)
            }
        }
        return inputs
    }

    /// Plays one round: a recorded round on the files' own clock when every sensor the game reads
    /// is a file, else live on the wall clock.
    ///
    /// The plan (its duration, and the signal time for a game with a signal) comes from the
    /// caller: in a game against others the lobby issues it. `progress` is called about every
    /// ``progressInterval`` seconds of the round. Cancelling the calling task stops the sensors
    /// (waiting for their threads to restore the devices) and throws `CancellationError`. A
    /// sensor that fails mid-round ends the round with its ``SensorError``.
    public func play(_ game: any Minigame, plan: RoundPlan, calibration: SensorCalibration,
                     progress: @Sendable (RoundProgress) -> Void = { _ in }) async throws -> RoundRecording {
        let inputs = try inputs(for: game)
        return try await play(game, inputs: inputs, plan: plan, calibration: calibration, progress: progress)
    }

    /// Plays one round on inputs found before (by ``inputs(for:)``), so that a missing sensor is
    /// reported before a countdown rather than after it.
    public func play(_ game: any Minigame, inputs: RoundInputs, plan: RoundPlan, calibration: SensorCalibration,
                     progress: @Sendable (RoundProgress) -> Void = { _ in }) async throws -> RoundRecording {
        guard plan.duration.isFinite, plan.duration > 0 else {
            throw RoundError.invalidPlan(game: game.name, reason: "a round must last a positive number of seconds, not \(plan.duration)")
        }
        if let signal = plan.signalTime, !(signal >= 0 && signal <= plan.duration) {
            throw RoundError.invalidPlan(game: game.name, reason: "the signal at \(signal) s is outside the \(plan.duration) s round")
        }
        for sensor in game.sensors.sorted(by: { $0.rawValue < $1.rawValue }) where !inputs.has(sensor) {
            throw RoundError.invalidPlan(game: game.name, reason: "the inputs have no \(sensor.rawValue), which the game reads")
        }
        try Task.checkCancellation()
        logger.debug("Round starts", metadata: [
            "game": "\(game.name)", "duration_s": "\(plan.duration)", "mode": "\(inputs.fromRecordings ? "recorded" : "live")",
            "accelerometer": "\(inputs.accelerometer?.label ?? "-")", "microphone": "\(inputs.microphone?.label ?? "-")",
        ])
        let recording = inputs.fromRecordings
            ? try await recordedRound(game, inputs: inputs, plan: plan, calibration: calibration, progress: progress)
            : try await liveRound(game, inputs: inputs, plan: plan, calibration: calibration, progress: progress)
        logger.debug("Round ends", metadata: [
            "game": "\(game.name)", "levels": "\(recording.levels.count)", "accelerations": "\(recording.accelerations.count)",
        ])
        return recording
    }

    /// A round on live sensors, timed by the wall clock.
    private func liveRound(_ game: any Minigame, inputs: RoundInputs, plan: RoundPlan, calibration: SensorCalibration,
                           progress: @Sendable (RoundProgress) -> Void) async throws -> RoundRecording {
        // Sensors start with the round, so a recording fed from a file starts at its beginning.
        let start = monotonicSeconds()
        let recorder = RoundRecorder(start: start)
        let accelerations = inputs.accelerometer?.samples()
        let levels = inputs.microphone?.levels()
        // The sensors' readers are children of the round: its cancellation reaches them, and
        // nothing reads on after the round returns.
        let cancelled = await withTaskGroup(of: Drained.self) { group in
            group.addTask {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { readers in
                        if let accelerations {
                            readers.addTask { for try await sample in accelerations { recorder.add(sample) } }
                        }
                        if let levels {
                            readers.addTask { for try await level in levels { recorder.add(level) } }
                        }
                        try await readers.waitForAll()
                    }
                } catch {
                    recorder.fail(error)
                }
                return .collected
            }
            while !Task.isCancelled, recorder.failure == nil {
                let elapsed = monotonicSeconds() - start
                guard elapsed < plan.duration else { break }
                let (level, sample) = recorder.latest
                progress(RoundProgress(elapsed: elapsed, plan: plan, level: level, acceleration: sample))
                do { try await Task.sleep(for: .seconds(min(progressInterval, plan.duration - elapsed))) } catch { break }
            }
            if Task.isCancelled {
                // Nothing read will be used: end the streams now rather than drain them.
                group.cancelAll()
                return true
            }
            // Stop the sensors but keep what they already read; cancel only if they do not end.
            accelerations?.stop()
            levels?.stop()
            group.addTask { [drainTimeout] in
                do { try await Task.sleep(for: .seconds(drainTimeout)) } catch { return .interrupted }
                return .timedOut
            }
            if await group.next() == .timedOut {
                logger.warning("The sensors did not stop within \(drainTimeout) s of the round's end; their streams were cancelled")
            }
            group.cancelAll()
            return false
        }
        // The reading threads restore the devices (IIO buffer off, PCM closed) before we go on.
        await accelerations?.stopAndWait()
        await levels?.stopAndWait()
        if cancelled { throw CancellationError() }
        if let failure = recorder.failure { throw failure }
        return recorder.recording(game: game.name, plan: plan, calibration: calibration)
    }

    /// How the wait for the sensors' streams to end after a round ended.
    private enum Drained: Sendable { case collected, timedOut, interrupted }

    /// A round played from files, on the files' own clock.
    private func recordedRound(_ game: any Minigame, inputs: RoundInputs, plan: RoundPlan, calibration: SensorCalibration,
                               progress: @Sendable (RoundProgress) -> Void) async throws -> RoundRecording {
        var levels: [LevelSample] = []
        var accelerations: [AccelerationSample] = []
        if let microphone = inputs.microphone {
            levels = try await read(microphone.levels(), source: microphone.label, plan: plan, time: \.time) { time, level in
                progress(RoundProgress(elapsed: time, plan: plan, level: level, acceleration: nil))
            }
        }
        if let accelerometer = inputs.accelerometer {
            accelerations = try await read(accelerometer.samples(), source: accelerometer.label, plan: plan, time: \.time) { time, sample in
                progress(RoundProgress(elapsed: time, plan: plan, level: levels.last, acceleration: sample))
            }
        }
        return RoundRecording(game: game.name, duration: plan.duration, signalTime: plan.signalTime,
                              levels: levels, accelerations: accelerations, calibration: calibration)
    }

    /// The elements of `stream` up to the end of the round, their times moved so the first is 0;
    /// stops the stream and waits for its thread before returning or throwing.
    private func read<Element: Sendable>(_ stream: SensorStream<Element>, source: String, plan: RoundPlan,
                                         time: WritableKeyPath<Element, Double>,
                                         progress: (Double, Element) -> Void) async throws -> [Element] {
        var elements: [Element] = []
        var first: Double?
        var nextProgress = 0.0
        let result: Result<Void, any Error>
        do {
            for try await element in stream {
                if Task.isCancelled { break }
                let start = first ?? element[keyPath: time]
                first = start
                var moved = element
                moved[keyPath: time] -= start
                if moved[keyPath: time] > plan.duration { break }
                elements.append(moved)
                if moved[keyPath: time] >= nextProgress {
                    progress(moved[keyPath: time], moved)
                    nextProgress = moved[keyPath: time] + progressInterval
                }
            }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        await stream.stopAndWait()
        try Task.checkCancellation()
        try result.get()
        // A round the samples do not cover to its end is one the score verifier refuses.
        if let last = elements.last?[keyPath: time], plan.duration - last > ScoreVerifier().maximumGap {
            logger.warning("The recording ends before the round does", metadata: [
                "source": "\(source)", "ends_s": "\(last)", "round_s": "\(plan.duration)",
            ])
        }
        return elements
    }
}

/// The sensors a round of one game reads, found and ready to start.
public struct RoundInputs: Sendable {
    public var accelerometer: AccelerometerInput?
    public var microphone: MicrophoneInput?
    /// Every sensor the game reads is a file: the round runs on the files' own clock.
    public var fromRecordings: Bool

    public init(accelerometer: AccelerometerInput? = nil, microphone: MicrophoneInput? = nil, fromRecordings: Bool) {
        self.accelerometer = accelerometer
        self.microphone = microphone
        self.fromRecordings = fromRecordings
    }

    func has(_ sensor: SensorKind) -> Bool {
        switch sensor {
        case .accelerometer: accelerometer != nil
        case .microphone: microphone != nil
        }
    }
}

/// How a round is going, for a live display.
public struct RoundProgress: Sendable {
    /// Seconds since the round started (on the files' clock in a recorded round).
    public var elapsed: Double
    /// Seconds the round lasts.
    public var duration: Double
    /// Whether the signal is showing; nil for a round without one.
    public var signalShown: Bool?
    /// The newest microphone level, if the round reads the microphone.
    public var level: LevelSample?
    /// The newest accelerometer sample, if the round reads the accelerometer.
    public var acceleration: AccelerationSample?

    public init(elapsed: Double, duration: Double, signalShown: Bool? = nil, level: LevelSample? = nil,
                acceleration: AccelerationSample? = nil) {
        self.elapsed = elapsed
        self.duration = duration
        self.signalShown = signalShown
        self.level = level
        self.acceleration = acceleration
    }

    init(elapsed: Double, plan: RoundPlan, level: LevelSample?, acceleration: AccelerationSample?) {
        self.init(elapsed: elapsed, duration: plan.duration, signalShown: plan.signalTime.map { elapsed >= $0 },
                  level: level, acceleration: acceleration)
    }

    /// Seconds left, never below 0.
    public var remaining: Double { max(0, duration - elapsed) }
}

/// Why a round could not be played.
public enum RoundError: Error, Sendable, CustomStringConvertible {
    /// A sensor the game reads could not be found or opened.
    case sensorUnavailable(game: MinigameName, sensor: SensorKind, cause: SensorError)
    /// The plan (or the inputs given with it) cannot be played.
    case invalidPlan(game: MinigameName, reason: String)
    /// The sensor setup has a field whose value cannot work.
    case invalidSetup(SensorSetupError)

    public var description: String {
        switch self {
        case .sensorUnavailable(let game, let sensor, let cause):
            "A \(game) round needs the \(sensor.rawValue), and it is not there: \(cause)"
        case .invalidPlan(let game, let reason):
            "This \(game) round cannot be played: \(reason)."
        case .invalidSetup(let error):
            error.description
        }
    }
}
