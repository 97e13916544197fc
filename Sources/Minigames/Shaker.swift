import SensorSamples

/// Shake the device hard for 10 s. Every shake whose acceleration goes above ``thresholdG`` scores
/// ``pointsPerShake``, counted once per peak: after a shake counts, the magnitude must fall below
/// ``rearmG`` before the next one can.
///
/// Ludur's tests found thresholds between 3 and 5 g separate real shakes from waving best; the
/// magnitude (not one axis) is used so how the device is held does not matter.
public struct Shaker: Minigame {
    public let name = MinigameName.shaker
    public let instructions = "Shake the device as hard as you can, again and again!"
    public let duration: Double
    public let sensors: Set<SensorKind> = [.accelerometer]
    /// Acceleration magnitude, in g, a shake must exceed; held within 3...5.
    public let thresholdG: Double
    /// Magnitude, in g, below which the next shake can count.
    public var rearmG: Double { thresholdG * 0.6 }
    public let pointsPerShake = 20

    public init(duration: Double = 10, thresholdG: Double = 4) {
        self.duration = duration
        self.thresholdG = min(5, max(3, thresholdG))
    }

    public func score(_ recording: RoundRecording) -> GameScore {
        let samples = recording.accelerationsInRound
        let shakes = shakeTimes(samples).count
        let strongest = samples.map { $0.magnitude / standardGravity }.max() ?? 0
        return GameScore(game: name, score: shakes * pointsPerShake, details: [
            "shakes": Double(shakes), "threshold_g": thresholdG, "strongest_g": strongest, "samples": Double(samples.count),
        ])
    }

    /// The times of the samples that counted as shakes.
    public func shakeTimes(_ samples: [AccelerationSample]) -> [Double] {
        var times: [Double] = []
        var armed = true
        for sample in samples {
            let magnitude = sample.magnitude / standardGravity
            if armed, magnitude > thresholdG {
                times.append(sample.time)
                armed = false
            } else if !armed, magnitude < rearmG {
                armed = true
            }
        }
        return times
    }
}
