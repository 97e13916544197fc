import Glibc
import SensorSamples

/// Shout as loud as you can. Scores 0–1000 from the loudest 50 ms of the round.
///
/// Ludur's curve, on a level L in dB from −120 (silence) to 0 (full scale):
/// `x = (L + 120) / 1.92869`, `v = 0.7746 · 10^(x / 20)`; v is about 1000 at full scale. It
/// compresses loudness (v grows with amplitude^0.52), which separates shouting from talking
/// better than the raw level. Two changes:
///
/// - L is not the raw dBFS level. The range from this device's noise threshold (its calibrated
///   noise floor plus ``marginDB``) to full scale is stretched onto −120…0, so a quiet room scores
///   0 on every device, whatever its gain.
/// - The level is the loudest window *RMS* (sine-referenced: +3.01 dB, so a full-scale sine is
///   0 dB), not the sample peak: a tap on the microphone has a high peak but little energy.
///
/// v is then shifted and scaled so the threshold gives exactly 0 and full scale exactly 1000.
public struct Screamer: Minigame {
    public let name = MinigameName.screamer
    public let instructions = "Shout into the microphone as loud as you can!"
    public let duration: Double
    public let sensors: Set<SensorKind> = [.microphone]

    /// dB above the noise floor a window must reach to score at all.
    public let marginDB = 6.0
    /// The noise floor assumed when the device was never calibrated, in dBFS.
    public static let uncalibratedNoiseFloor = -60.0
    /// Calibrated noise floors are held in this range, so a forged calibration cannot stretch
    /// the scale.
    public static let noiseFloorRange = -90.0 ... -20.0

    public init(duration: Double = 5) {
        self.duration = duration
    }

    public func score(_ recording: RoundRecording) -> GameScore {
        let floor = min(Self.noiseFloorRange.upperBound, max(Self.noiseFloorRange.lowerBound,
            recording.calibration.microphone?.noiseFloorDBFS ?? Self.uncalibratedNoiseFloor))
        let threshold = floor + marginDB
        let levels = recording.levelsInRound
        let loudest = levels.map { min(0, $0.rmsDBFS + 3.0103) }.max() ?? LevelMeter.silenceFloor
        var details: [String: Double] = [
            "loudest_db": loudest, "noise_floor_dbfs": floor, "threshold_db": threshold, "windows": Double(levels.count),
        ]
        guard loudest > threshold else { return GameScore(game: name, score: 0, details: details) }
        let stretched = -120 * loudest / threshold
        let value = Self.ludurCurve(stretched)
        let lowest = Self.ludurCurve(-120)
        let highest = Self.ludurCurve(0)
        details["ludur_v"] = value
        let score = Int(((value - lowest) / (highest - lowest) * 1000).rounded())
        return GameScore(game: name, score: score, details: details)
    }

    /// Ludur's loudness value for a level in −120…0 dB.
    public static func ludurCurve(_ level: Double) -> Double {
        let x = (level + 120) / 1.92869
        return 0.7746 * pow(10, x / 20)
    }
}
