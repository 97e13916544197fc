import Foundation
import TestSupport
import Testing
@testable import Sensors

struct LevelMeterTests {
    @Test func cutsFiftyMillisecondWindows() {
        var meter = LevelMeter(sampleRate: 16_000)
        #expect(meter.windowFrames == 800)
        let levels = meter.add([Int16](repeating: 100, count: 16_000 + 400))
        #expect(levels.count == 20)
        #expect(levels.map(\.time) == (1...20).map { Double($0) / 20 })
        // The half window left over completes with the next samples.
        #expect(meter.add([Int16](repeating: 100, count: 400)).count == 1)
    }

    @Test func silenceIsTheFloor() {
        var meter = LevelMeter(sampleRate: 16_000)
        let level = meter.add([Int16](repeating: 0, count: 800))[0]
        #expect(level.rmsDBFS == LevelMeter.silenceFloor)
        #expect(level.peakDBFS == LevelMeter.silenceFloor)
    }

    @Test func fullScaleSquareWaveIsZeroDBFS() {
        var meter = LevelMeter(sampleRate: 8_000)
        let square = (0..<400).map { $0 % 8 < 4 ? Int16.max : Int16.min }
        let level = meter.add(square)[0]
        // +32767 and −32768: RMS within 0.0002 dB of full scale, peak exactly full scale.
        #expect(abs(level.rmsDBFS) < 0.001, "got \(level.rmsDBFS)")
        #expect(level.peakDBFS == 0)
    }

    @Test func sineLevelsMatchTheory() {
        var meter = LevelMeter(sampleRate: 16_000)
        let bytes = sineBytes(frequency: 1000, amplitude: 32767, seconds: 0.05)
        let samples = stride(from: 0, to: bytes.count, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        let level = meter.add(samples)[0]
        #expect(abs(level.rmsDBFS - (-3.0103)) < 0.001)
        #expect(abs(level.peakDBFS) < 0.001)
    }
}

struct RawAudioFileTests {
    @Test func readsLevelsFromHeaderlessAudio() throws {
        let directory = try TemporaryFolder("raw")
        try directory.write(sineBytes(frequency: 500, amplitude: 3276.8, seconds: 0.5), to: "tone.raw")
        let levels = try RawAudioFile(path: directory.path + "/tone.raw").allLevels()
        #expect(levels.count == 10)
        #expect(levels.allSatisfy { abs($0.peakDBFS - (-20)) < 0.01 && abs($0.rmsDBFS - (-23.01)) < 0.02 })
    }

    @Test func refusesAnOddNumberOfBytes() throws {
        let directory = try TemporaryFolder("raw")
        try directory.write([0, 0, 1], to: "odd.raw")
        #expect(throws: SensorError.malformedAudioFile(path: directory.path + "/odd.raw", byteOffset: 2, reason: "3 bytes is not a whole number of 16-bit samples")) {
            try RawAudioFile(path: directory.path + "/odd.raw").allLevels()
        }
    }

    @Test func streamsTheSameLevels() async throws {
        let directory = try TemporaryFolder("raw")
        try directory.write(sineBytes(frequency: 500, amplitude: 1000, seconds: 0.3), to: "tone.raw")
        let file = RawAudioFile(path: directory.path + "/tone.raw")
        var streamed: [LevelSample] = []
        for try await level in file.levels() { streamed.append(level) }
        #expect(streamed == (try file.allLevels()))
        #expect(streamed.count == 6)
    }
}

struct SampleFileTests {
    @Test func readsEachSensorsLines() throws {
        let directory = try TemporaryFolder("jsonl")
        try directory.write("""
        {"sensor":"accel","t":0.01,"x":0.5,"y":-0.25,"z":9.75}

        {"sensor":"mic","t":0.05,"rms_dbfs":-40.5,"peak_dbfs":-31,"overruns":0}
        {"t":0.02,"x":1,"y":2,"z":3,"extra":"ignored"}
        """, to: "round.jsonl")
        let file = SampleFile(path: directory.path + "/round.jsonl")
        #expect(try file.accelerations() == [AccelerationSample(time: 0.01, x: 0.5, y: -0.25, z: 9.75), AccelerationSample(time: 0.02, x: 1, y: 2, z: 3)])
        #expect(try file.levels() == [LevelSample(time: 0.05, rmsDBFS: -40.5, peakDBFS: -31)])
    }

    @Test func namesTheLineOfABadSample() throws {
        let directory = try TemporaryFolder("jsonl")
        try directory.write("{\"t\":0,\"x\":1,\"y\":2,\"z\":3}\n{\"t\":1,\"x\":1,\"y\":2}\n", to: "bad.jsonl")
        #expect(throws: SensorError.malformedRecording(path: directory.path + "/bad.jsonl", line: 2, reason: "not a accel sample (missing \"z\")")) {
            try SampleFile(path: directory.path + "/bad.jsonl").accelerations()
        }
    }
}

struct CalibrationStoreTests {
    @Test func defaultsUnderXDGConfigHomeThenHome() {
        #expect(CalibrationStore.defaultPath(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/nearplay/sensor-calibration.json")
        #expect(CalibrationStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/nearplay/sensor-calibration.json")
    }

    @Test func savesAndLoadsTheCalibration() throws {
        let directory = try TemporaryFolder("calibration")
        let store = CalibrationStore(path: directory.path + "/deep/calibration.json")
        #expect(try store.load() == SensorCalibration())
        let calibration = SensorCalibration(
            microphone: MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -58.5),
            accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0.1, -0.2, 9.7], gravity: 9.7026, noise: 0.03)
        )
        try store.save(calibration)
        #expect(try store.load() == calibration)
        #expect(try directory.read("deep/calibration.json").contains("\"noise_floor_dbfs\""))
    }

    @Test func aDamagedFileIsAnErrorNamingIt() throws {
        let directory = try TemporaryFolder("calibration")
        try directory.write("{\"microphone\": 3}", to: "c.json")
        let error = try #require(throws: SensorError.self) { try CalibrationStore(path: directory.path + "/c.json").load() }
        #expect(error.description.contains(directory.path + "/c.json"))
        #expect(error.description.contains("nearplay calibrate sensors"))
        #expect(error.description.contains("(wrong type at \"microphone\")"), "the field, not a raw DecodingError: \(error)")
    }

    @Test func measuresTheNoiseFloorAndGravity() throws {
        let levels = (0..<100).map { LevelSample(time: Double($0) * 0.05, rmsDBFS: -70 + Double($0 % 10), peakDBFS: -50) }
        #expect(MicrophoneCalibration.measure(pcm: "p", levels: levels)?.noiseFloorDBFS == -61)
        let still = (0..<50).map { AccelerationSample(time: Double($0), x: 0, y: 0, z: $0 % 2 == 0 ? 9.7 : 9.9) }
        let measured = try #require(AccelerometerCalibration.measure(device: "d", samples: still))
        #expect(abs(measured.gravity - 9.8) < 1e-9)
        #expect(abs(measured.noise - 0.1) < 1e-9)
        #expect(abs(measured.gravityOffset - (9.8 - standardGravity)) < 1e-9)
    }
}

struct AxisOrientationTests {
    @Test func parsesAxisSwapsAndSigns() {
        #expect(AxisOrientation("x,y,z") == .identity)
        let turned = AxisOrientation("-y, x, +z")
        #expect(turned?.description == "-y,x,z")
        #expect(turned.map { $0.apply((1, 2, 3)) }.map { [$0.x, $0.y, $0.z] } == [-2, 1, 3])
        for bad in ["x,y", "x,x,z", "x,y,w", "", "x,y,z,x", "--x,y,z"] {
            #expect(AxisOrientation(bad) == nil, "\(bad)")
        }
    }
}

struct LevelMeterEdgeTests {
    @Test func windowsThatAreNotPositiveFiniteNumbersDoNotTrap() {
        for window in [Double.nan, .infinity, -.infinity, 1e300, -1, 0] {
            let meter = LevelMeter(sampleRate: 16_000, windowSeconds: window)
            #expect(meter.windowFrames >= 1 && meter.windowFrames <= 160_000, "window \(window)")
        }
        #expect(LevelMeter(sampleRate: .max, windowSeconds: 1e300).windowFrames == 100_000_000)
        #expect(LevelMeter(sampleRate: .min).sampleRate == 1)
    }

    /// An overrun between two reads drops the partial window instead of mixing audio from both
    /// sides of the gap, and later windows keep their place in time.
    @Test func anOverrunDropsThePartialWindow() {
        var meter = LevelMeter(sampleRate: 16_000)
        #expect(meter.add([Int16](repeating: 20_000, count: 400)).isEmpty)
        let after = meter.add([Int16](repeating: 0, count: 800), overruns: 1)
        #expect(after.count == 1)
        #expect(after[0].rmsDBFS == LevelMeter.silenceFloor, "no loud audio from before the gap")
        #expect(after[0].overruns == 1)
        #expect(abs(after[0].time - 1_200.0 / 16_000) < 1e-12)
        // Without an overrun the same samples share a window.
        var steady = LevelMeter(sampleRate: 16_000)
        _ = steady.add([Int16](repeating: 20_000, count: 400))
        #expect(steady.add([Int16](repeating: 0, count: 400))[0].rmsDBFS > -10)
    }
}
