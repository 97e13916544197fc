import Foundation
@testable import Minigames
import Sensors

/// Synthetic rounds for the scoring tests.
enum Synthetic {
    /// 20 windows per second at a constant level.
    static func levels(seconds: Double, rms: Double, peakAbove: Double = 3) -> [LevelSample] {
        (1...Int(seconds * 20)).map { LevelSample(time: Double($0) * 0.05, rmsDBFS: rms, peakDBFS: min(0, rms + peakAbove)) }
    }

    /// A device lying flat (gravity on z) at `rate` Hz, with small deterministic noise.
    static func still(seconds: Double, rate: Double = 100, noise: Double = 0.02, from start: Double = 0) -> [AccelerationSample] {
        (0..<Int(seconds * rate)).map { index in
            let wobble = noise * sin(Double(index) * 1.7)
            return AccelerationSample(time: start + Double(index) / rate, x: wobble, y: -wobble, z: standardGravity + wobble)
        }
    }

    /// Shakes: each is `samplesPerShake` samples at `peakG` along x followed by a return to rest.
    static func shakes(count: Int, peakG: Double, samplesPerShake: Int = 8, rate: Double = 100) -> [AccelerationSample] {
        var samples: [AccelerationSample] = []
        var time = 0.0
        for _ in 0..<count {
            for _ in 0..<samplesPerShake {
                samples.append(AccelerationSample(time: time, x: peakG * standardGravity, y: 0, z: 0))
                time += 1 / rate
            }
            for _ in 0..<10 {
                samples.append(AccelerationSample(time: time, x: 0, y: 0, z: standardGravity))
                time += 1 / rate
            }
        }
        return samples
    }
}

/// A small deterministic generator for rounds with a random signal.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
