import Foundation

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast, seedable generator, so simulated
/// traces, simulated air, seeded lobby histories, fuzz tests and benchmark data repeat exactly.
/// The project's one copy: it lives in BeaconFrames, the lowest module its users (Traces, Radio,
/// Proximity, Lobby, the tests and benchmarks) can all import.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func nextDouble() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Standard normal (Box–Muller).
    public mutating func nextGaussian() -> Double {
        let u1 = max(nextDouble(), .leastNonzeroMagnitude)
        let u2 = nextDouble()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
