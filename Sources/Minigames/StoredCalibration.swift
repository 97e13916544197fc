import SensorSamples

/// What `nearplay calibrate sensors` may store of what it measured: only calibrations this
/// verifier accepts, so a device never holds one that its own scores would be refused for.
extension ScoreVerifier {
    /// `measured` with its noise floor held in ``Screamer/noiseFloorRange``, the floors games
    /// and ``checkCalibration(_:)`` accept (a muted input reads −120 dBFS; a floor above the
    /// range only makes scoring harder).
    public func storable(_ measured: MicrophoneCalibration) -> MicrophoneCalibration {
        var microphone = measured
        let range = Screamer.noiseFloorRange
        microphone.noiseFloorDBFS = min(range.upperBound, max(range.lowerBound, measured.noiseFloorDBFS))
        return microphone
    }

    /// `measured` when it is a device at rest by this verifier's limits
    /// (``maximumCalibratedNoise``, ``calibratedGravity``); anything else means the device
    /// moved while it was measured, and is not stored at all.
    public func storable(_ measured: AccelerometerCalibration) throws(AccelerometerNotAtRest) -> AccelerometerCalibration {
        guard measured.noise <= maximumCalibratedNoise, calibratedGravity.contains(measured.gravity / standardGravity) else {
            throw AccelerometerNotAtRest(measured: measured, maximumNoise: maximumCalibratedNoise, gravity: calibratedGravity)
        }
        return measured
    }
}

/// An accelerometer measurement that is not a device at rest, with the limits it missed.
public struct AccelerometerNotAtRest: Error, Sendable, Hashable {
    public var measured: AccelerometerCalibration
    /// The largest noise at rest accepted, m/s².
    public var maximumNoise: Double
    /// The gravity accepted at rest, in g.
    public var gravity: ClosedRange<Double>

    public init(measured: AccelerometerCalibration, maximumNoise: Double, gravity: ClosedRange<Double>) {
        self.measured = measured
        self.maximumNoise = maximumNoise
        self.gravity = gravity
    }
}
