import Minigames
import SensorSamples
import Testing

/// What `nearplay calibrate sensors` may store: only what the verifier accepts of a device at rest.
struct StoredCalibrationTests {
    let verifier = ScoreVerifier()

    /// A muted input (−120 dBFS) is stored at the quietest floor games accept, a roaring room
    /// at the loudest; a floor in between is stored as measured.
    @Test func aMicrophoneFloorIsHeldInTheRangeGamesAccept() throws {
        #expect(verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -120)).noiseFloorDBFS == Screamer.noiseFloorRange.lowerBound)
        #expect(verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -5)).noiseFloorDBFS == Screamer.noiseFloorRange.upperBound)
        let quiet = MicrophoneCalibration(pcm: "hw:1", noiseFloorDBFS: -55.5)
        #expect(verifier.storable(quiet) == quiet)
        try verifier.checkCalibration(SensorCalibration(microphone: verifier.storable(MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -120))))
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
