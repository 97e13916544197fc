import Foundation
import Minigames
@testable import Rounds
import Sensors
import TestSupport
import Testing

/// Rounds on a live sensor: an accelerometer in a fake IIO sysfs tree, polled on the wall clock.
struct LiveRoundTests {
    let folder: TemporaryFolder
    let sensors: SensorSetup

    init() throws {
        folder = try TemporaryFolder()
        for (name, text) in ["name": "adxl345", "in_accel_x_raw": "3", "in_accel_y_raw": "-2", "in_accel_z_raw": "256",
                             "in_accel_scale": "0.038300"] {
            try folder.write(text + "\n", to: "sys/iio:device0/" + name)
        }
        sensors = SensorSetup(iioRoot: folder.path + "/sys", iioDeviceDirectory: folder.path + "/dev",
                              calibration: folder.noCalibration)
    }

    @Test func aLiveRoundRunsOnTheWallClock() async throws {
        let runner = RoundRunner(sensors: sensors)
        let progress = ProgressLog()
        let started = monotonicSeconds()
        let recording = try await runner.play(Statue(), plan: RoundPlan(duration: 1), calibration: SensorCalibration()) {
            progress.note($0)
        }
        #expect(monotonicSeconds() - started >= 1)
        #expect(recording.game == "statue" && recording.duration == 1)
        // How the samples fall in the round is not checked here: other tests run beside this one
        // on a two-thread pool, and when they hold it for the whole round every sample arrives
        // late, so the least-delayed one no longer ties the clocks (RoundRecorderTests checks
        // the tying itself). The polling thread is its own, so some samples are read whatever the load.
        #expect(!recording.accelerations.isEmpty)
        #expect(recording.accelerations.allSatisfy { $0.time >= 0 })
        #expect(recording.accelerations.map(\.time) == recording.accelerations.map(\.time).sorted())
        #expect(abs((recording.accelerations.first?.z ?? 0) - 256 * 0.0383) < 1e-9)
        let reports = progress.all
        #expect(!reports.isEmpty)
        #expect(reports.map(\.elapsed) == reports.map(\.elapsed).sorted())
        #expect(reports.allSatisfy { $0.duration == 1 && $0.signalShown == nil && $0.level == nil })
    }

    @Test func cancellingStopsALiveRoundPromptly() async throws {
        let runner = RoundRunner(sensors: sensors)
        let progress = ProgressLog()
        let round = Task {
            try await runner.play(Shaker(), plan: RoundPlan(duration: 120), calibration: SensorCalibration()) { progress.note($0) }
        }
        try await Task.sleep(for: .milliseconds(400))
        let cancelled = monotonicSeconds()
        round.cancel()
        let result = await round.result
        let stopped = monotonicSeconds() - cancelled
        #expect(throws: CancellationError.self) { try result.get() }
        // Within ~0.2 s when the machine is idle (3.8 s seen while the whole suite ran on two
        // cores); a round that ignored the cancellation would run the 119.6 s it had left.
        #expect(stopped < 60, "the round stopped \(stopped) s after it was cancelled")
        #expect(!progress.all.isEmpty)
    }

    @Test func aRoundCancelledBeforeItStartsThrowsAtOnce() async throws {
        let runner = RoundRunner(sensors: sensors)
        let round = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await runner.play(Statue(), plan: RoundPlan(duration: 10), calibration: SensorCalibration())
        }
        await #expect(throws: CancellationError.self) { try await round.value }
    }

    /// A round without its accelerometer fails before it starts, naming the sensor and where it
    /// looked.
    @Test func aMissingAccelerometerIsNamed() async throws {
        let empty = try TemporaryFolder()
        let runner = RoundRunner(sensors: SensorSetup(iioRoot: empty.path, calibration: folder.noCalibration))
        do {
            _ = try await runner.play(Shaker(), plan: RoundPlan(duration: 10), calibration: SensorCalibration())
            Issue.record("a round without an accelerometer was played")
        } catch let error as RoundError {
            guard case .sensorUnavailable(let game, let sensor, let cause) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(game == "shaker" && sensor == .accelerometer)
            #expect(cause == .noAccelerometer(root: empty.path))
            #expect(error.description.contains("needs the accelerometer"))
            #expect(error.description.contains(empty.path))
        }
    }

    @Test func aMissingMicrophoneIsNamed() async throws {
        let runner = RoundRunner(sensors: SensorSetup(pcm: "nearplay-no-such-pcm", calibration: folder.noCalibration))
        let error = await #expect(throws: RoundError.self) {
            try await runner.play(Screamer(), plan: RoundPlan(duration: 5), calibration: SensorCalibration())
        }
        #expect(error?.description.contains("needs the microphone") == true)
        #expect(error?.description.contains("nearplay-no-such-pcm") == true)
    }

    @Test func aMissingRecordingIsNamed() async throws {
        let path = folder.path + "/no-such-file.jsonl"
        let runner = RoundRunner(sensors: SensorSetup(accelFile: path, calibration: folder.noCalibration))
        let error = await #expect(throws: RoundError.self) {
            try await runner.play(Statue(), plan: RoundPlan(duration: 10), calibration: SensorCalibration())
        }
        #expect(error?.description.contains("needs the accelerometer") == true)
        #expect(error?.description.contains("There is no recording at \(path)") == true)
    }

    @Test func aSetupThatCannotWorkIsRefusedNamingTheField() async throws {
        var setup = sensors
        setup.orientation = "x,y"
        let runner = RoundRunner(sensors: setup)
        let error = await #expect(throws: RoundError.self) {
            try await runner.play(Statue(), plan: RoundPlan(duration: 10), calibration: SensorCalibration())
        }
        guard case .invalidSetup(let cause) = error else {
            Issue.record("expected an invalid setup, got \(String(describing: error))")
            return
        }
        #expect(cause.field == .orientation)
        #expect(error?.description == "Sensor setup: orientation x,y is not three distinct axes such as x,y,z or -y,x,z.")
    }

    @Test(arguments: [RoundPlan(duration: 0), RoundPlan(duration: .nan), RoundPlan(duration: .infinity), RoundPlan(duration: 8, signalTime: 9)])
    func refusesAPlanThatCannotBePlayed(_ plan: RoundPlan) async throws {
        let runner = RoundRunner(sensors: sensors)
        let error = await #expect(throws: RoundError.self) {
            try await runner.play(Quickdraw(), plan: plan, calibration: SensorCalibration())
        }
        #expect(error?.description.contains("quickdraw round cannot be played") == true)
    }
}

/// The recorder behind live rounds.
struct RoundRecorderTests {
    /// A consumer that fell behind receives samples late; their times stay where the sensor put
    /// them, relative to the least-delayed sample.
    @Test func lateDeliveryDoesNotShiftSamples() {
        let start = 500.0
        let recorder = RoundRecorder(start: start)
        // The sensor clock reads 1000 s at the round start; the first sample, measured 10 ms in,
        // arrives at once.
        recorder.add(AccelerationSample(time: 1000.01, x: 0, y: 0, z: 9.8), arrival: 500.01)
        // Measured 150 ms after the first but delivered 200 ms after it.
        recorder.add(AccelerationSample(time: 1000.16, x: 1, y: 0, z: 9.8), arrival: 500.21)
        let recording = recorder.recording(game: "shaker", plan: RoundPlan(duration: 10), calibration: SensorCalibration())
        #expect(recording.accelerations.count == 2)
        #expect(abs(recording.accelerations[0].time - 0.01) < 1e-9)
        #expect(abs(recording.accelerations[1].time - 0.16) < 1e-9, "samples 150 ms apart stay 150 ms apart")
    }
}
