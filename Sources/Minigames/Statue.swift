import Glibc
import SensorSamples

/// Hold the device perfectly still for 10 s. The score falls with motion energy:
/// `1000 · exp(−excess / scale)`, where the motion is the RMS deviation of the acceleration
/// vector from its mean over the round (m/s², tilting counts as gravity moves between axes) and
/// the excess is what is left after twice the sensor's calibrated noise.
public struct Statue: Minigame {
    public let name = MinigameName.statue
    public let instructions = "Hold the device perfectly still until the time is up."
    public let duration: Double
    public let sensors: Set<SensorKind> = [.accelerometer]
    /// Motion, in m/s² RMS, that brings the score down to 1000/e ≈ 368.
    public let scale = 0.3
    /// Sensor noise assumed without calibration, m/s².
    public static let uncalibratedNoise = 0.05
    /// Samples needed to judge stillness: a round with fewer scores 0.
    public let minimumSamples = 10

    public init(duration: Double = 10) {
        self.duration = duration
    }

    public func score(_ recording: RoundRecording) -> GameScore {
        let samples = recording.accelerationsInRound
        let calibrated = recording.calibration.accelerometer?.noise ?? Self.uncalibratedNoise
        let noise = calibrated.isFinite ? min(0.5, max(0, calibrated)) : Self.uncalibratedNoise
        guard samples.count >= minimumSamples else {
            return GameScore(game: name, score: 0, details: ["samples": Double(samples.count), "noise_ms2": noise])
        }
        let count = Double(samples.count)
        let mean = (samples.map(\.x).reduce(0, +) / count, samples.map(\.y).reduce(0, +) / count, samples.map(\.z).reduce(0, +) / count)
        let meanSquare = samples.map { sample -> Double in
            let dx = sample.x - mean.0, dy = sample.y - mean.1, dz = sample.z - mean.2
            return dx * dx + dy * dy + dz * dz
        }.reduce(0, +) / count
        let motion = meanSquare.squareRoot()
        // Infinite or NaN readings (which ScoreVerifier refuses anyway) are not stillness.
        guard motion.isFinite else {
            return GameScore(game: name, score: 0, details: ["samples": count, "noise_ms2": noise])
        }
        let excess = max(0, motion - 2 * noise)
        let score = Int((1000 * exp(-excess / scale)).rounded())
        return GameScore(game: name, score: score, details: [
            "motion_ms2": motion, "noise_ms2": noise, "excess_ms2": excess, "samples": count,
        ])
    }
}
