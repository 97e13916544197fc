import Minigames
import SensorSamples
import Testing

/// What `nearplay calibrate sensors` may store: only what the verifier accepts of a device at rest.
struct StoredCalibrationTests {
    let verifier = ScoreVerifier()

    /// A muted input (−120 dBFS) and a studio-quiet room (−85) are stored at the quietest floor a
    /// lobby stores (−80), a roaring room at the loudest games accept; a floor in between is
    /// stored as measured.
    @Test func aMicrophoneFloorIsHeldInTheRangeGamesAndTheLobbyAccept() throws {
        #expect(verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -120)).noiseFloorDBFS == -80)
        #expect(verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -85)).noiseFloorDBFS == -80)
        #expect(verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -5)).noiseFloorDBFS == Screamer.noiseFloorRange.upperBound)
        let quiet = MicrophoneCalibration(pcm: "hw:1", noiseFloorDBFS: -55.5)
        #expect(verifier.storable(quiet) == quiet)
        try verifier.checkCalibration(SensorCalibration(microphone: verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -120))))
        // What the device stores, a lobby stores too (it once kept −90, which the lobby refuses).
        for floor in [-120.0, -90, -85, -80, -55.5, -20, -5] {
            try CalibrationBounds.restingDevice.check(SensorCalibration(microphone: verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: floor))))
        }
    }

    /// A chip quieter than real ones report (a filtered or simulated sensor) is stored at the
    /// lowest noise a lobby stores, not refused there.
    @Test func anAccelerometerQuieterThanRealChipsIsHeldAtTheLobbysBound() throws {
        let silent = AccelerometerCalibration(device: "iio:device0", rest: [0, 0, standardGravity], gravity: standardGravity, noise: 0.0001)
        let stored = try verifier.storable(silent)
        #expect(stored.noise == CalibrationBounds.restingDevice.accelerometerNoise.lowerBound)
        try CalibrationBounds.restingDevice.check(SensorCalibration(accelerometer: stored))
    }

    @Test func anAccelerometerAtRestIsStoredAsMeasured() throws {
        let still = try #require(AccelerometerCalibration.measure(device: "iio:device0", samples: Synthetic.still(seconds: 1)))
        #expect(try verifier.storable(still) == still)
    }

    /// Too much noise, or a gravity no chip at rest reads, means the device moved: nothing is
    /// stored, and the refusal carries the limits it missed.
    @Test(arguments: [(0.2, 1.0), (0.05, 0.8), (0.05, 1.2)])
    func anAccelerometerThatMovedIsRefused(noise: Double, gravityInG: Double) {
        let moved = AccelerometerCalibration(device: "iio:device0", rest: [0, 0, gravityInG * standardGravity],
                                             gravity: gravityInG * standardGravity, noise: noise)
        #expect(throws: AccelerometerNotAtRest(measured: moved, maximumNoise: 0.1, gravity: 0.9...1.1)) {
            try verifier.storable(moved)
        }
    }

    /// The limits are the verifier's own, so a stricter verifier stores less.
    @Test func theLimitsAreTheVerifiers() throws {
        var strict = ScoreVerifier()
        strict.maximumCalibratedNoise = 0.01
        let still = try #require(AccelerometerCalibration.measure(device: "iio:device0", samples: Synthetic.still(seconds: 1)))
        #expect(throws: AccelerometerNotAtRest.self) { try strict.storable(still) }
    }
}
