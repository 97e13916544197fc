import SensorSamples

/// What `nearplay calibrate sensors` may store of what it measured: only calibrations this
/// verifier accepts and a lobby stores (``CalibrationBounds/restingDevice``), so a device never
/// holds one that its own scores, or the lobby, would refuse.
extension ScoreVerifier {
    /// `measured` with its noise floor held in the floors a lobby stores
    /// (``CalibrationBounds/restingDevice``, within ``Screamer/noiseFloorRange``): a muted input
    /// reads −120 dBFS and a studio-quiet room −85; held at −80 they only make scoring a little
    /// harder, as a floor above the range does.
    public func storable(_ measured: MicrophoneCalibration) -> MicrophoneCalibration {
        var microphone = measured
        let range = CalibrationBounds.restingDevice.noiseFloor.clamped(to: Screamer.noiseFloorRange)
        microphone.noiseFloorDBFS = min(range.upperBound, max(range.lowerBound, measured.noiseFloorDBFS))
        return microphone
    }

    /// `measured` when it is a device at rest by this verifier's limits
    /// (``maximumCalibratedNoise``, ``calibratedGravity``); anything else means the device
    /// moved while it was measured, and is not stored at all. A noise below what real chips
    /// report (``CalibrationBounds/restingDevice``, e.g. a filtered or simulated sensor) is held
    /// at that bound, so a lobby stores it too.
    public func storable(_ measured: AccelerometerCalibration) throws(AccelerometerNotAtRest) -> AccelerometerCalibration {
        guard measured.noise <= maximumCalibratedNoise, calibratedGravity.contains(measured.gravity / standardGravity) else {
            throw AccelerometerNotAtRest(measured: measured, maximumNoise: maximumCalibratedNoise, gravity: calibratedGravity)
        }
        var accelerometer = measured
        accelerometer.noise = max(measured.noise, CalibrationBounds.restingDevice.accelerometerNoise.lowerBound)
        return accelerometer
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
