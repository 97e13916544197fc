import BeaconFrames
import Testing

/// The one SplitMix64 serves simulated traces, simulated air, seeded lobby histories, fuzz tests
/// and benchmark data, all of which rely on its sequence staying what it was.
@Suite struct SplitMix64Tests {
    /// The reference outputs for seed 0 (Vigna's splitmix64.c).
    @Test func matchesTheReferenceSequence() {
        var random = SplitMix64(seed: 0)
        #expect([random.next(), random.next(), random.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test func doublesAreInTheUnitIntervalAndGaussiansFinite() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<1000 {
            let uniform = random.nextDouble()
            #expect(uniform >= 0 && uniform < 1)
            #expect(random.nextGaussian().isFinite)
        }
    }

    /// Eddystone's 0 m power and the 1 m measured power differ by the one constant wherever a
    /// frame is read.
    @Test func eddystoneMeasuredPowerIsTheZeroMetrePowerLessTheOneMetreLoss() throws {
        let uid = try #require(EddystoneUID(txPower: -18, namespace: Array(repeating: 1, count: 10), instance: Array(repeating: 2, count: 6)))
        #expect(EddystoneUID.oneMetreLoss == 41)
        #expect(uid.measuredPower == -18 - EddystoneUID.oneMetreLoss)
    }
}
