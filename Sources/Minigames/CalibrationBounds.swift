import SensorSamples

/// What a device at rest reports when `nearplay calibrate sensors` measures it: the bounds a lobby
/// holds a calibration to before it stores one to verify a player's scores with.
///
/// Tighter than ``ScoreVerifier/checkCalibration(_:)``, which refuses only what no sensor can
/// report (and verifies recordings offline): a lobby must also refuse what a real device reports
/// only in conditions a player can stage to widen its scale (a studio-quiet room, a muted input).
/// The shared data (`../shared/data`, see its SOURCES.md) holds radio recordings only, no sensor
/// recordings, so the numbers come from datasheets and from what the calibration measures:
///
/// - Microphone: the noise floor is the 95th percentile of 50 ms RMS windows in a quiet room. A
///   MEMS microphone of the common −26 dBFS sensitivity (94 dB SPL; InvenSense ICS-43434, Knowles
///   SPH0645) in a quiet room of 35 dB(A) SPL reads −26 − (94 − 35) = −85 dBFS A-weighted, and a
///   few dB more unweighted (hum, ventilation) at the 95th percentile; 16-bit codecs' own noise
///   is about −90 dBFS. So −80 dBFS is as quiet as a device in an ordinary room calibrates, and
///   a lower floor (which lowers Screamer's threshold and raises every score: a recording
///   scoring 104 uncalibrated scores 234 at −90) is refused. The upper bound stays the
///   verifier's: a higher floor only makes scoring harder.
/// - Accelerometer: noise at rest is at least the chip's noise density over its bandwidth; the
///   quietest consumer parts (Bosch BMI160 180 µg/√Hz, ST LIS2DW12 low-noise 90 µg/√Hz) give
///   about 0.6–1.3 mg RMS at 50 Hz, so below 0.003 m/s² is not a real chip (a calibration that
///   low only hurts its owner, but says the calibration was made up). The upper bound is the
///   verifier's 0.1 m/s² (BMA250-class parts at 1 mg/√Hz over 100 Hz), as is gravity's 0.9–1.1 g
///   (zero-g offsets of ±40–100 mg per axis).
public struct CalibrationBounds: Sendable, Equatable {
    /// Noise floors a device at rest in an ordinary room reports, dBFS.
    public var noiseFloor: ClosedRange<Double>
    /// Accelerometer noise at rest a real chip reports, m/s².
    public var accelerometerNoise: ClosedRange<Double>

    public init(noiseFloor: ClosedRange<Double>, accelerometerNoise: ClosedRange<Double>) {
        self.noiseFloor = noiseFloor
        self.accelerometerNoise = accelerometerNoise
    }

    /// The bounds above: −80…−20 dBFS, 0.003…0.1 m/s².
    public static let restingDevice = CalibrationBounds(
        noiseFloor: -80.0 ... Screamer.noiseFloorRange.upperBound,
        accelerometerNoise: 0.003 ... ScoreVerifier(tolerance: 0).maximumCalibratedNoise)

    /// Throws why `calibration` is not one a device at rest reports; also applies
    /// ``ScoreVerifier/checkCalibration(_:)``.
    public func check(_ calibration: SensorCalibration) throws(ScoreRefusal) {
        try ScoreVerifier().checkCalibration(calibration)
        if let microphone = calibration.microphone, !noiseFloor.contains(microphone.noiseFloorDBFS) {
            throw .implausible("""
                a noise floor of \(microphone.noiseFloorDBFS) dBFS is quieter than a device in an ordinary room measures \
                (\(noiseFloor.lowerBound)…\(noiseFloor.upperBound) dBFS); calibrate again with `nearplay calibrate sensors` \
                where you play
                """)
        }
        if let accelerometer = calibration.accelerometer, !accelerometerNoise.contains(accelerometer.noise) {
            throw .implausible("""
                an accelerometer noise at rest of \(accelerometer.noise) m/s² is outside what real chips report \
                (\(accelerometerNoise.lowerBound)…\(accelerometerNoise.upperBound) m/s²); calibrate again with `nearplay calibrate sensors`
                """)
        }
    }
}
