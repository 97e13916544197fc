import AirBenchmarkSupport
import Ranging
import Testing

@Suite struct TwoWayAirTests {
    /// Twelve players in a room, receivers up to ±8 dB off, each advertising the 1 m power its
    /// own receiver measured: the pair's two-way median error is at most half the one-way one.
    @Test(arguments: [1, 2] as [UInt64])
    func twoWayHalvesTheErrorOfSelfCalibratedDevices(seed: UInt64) throws {
        var experiment = TwoWayAirExperiment()
        experiment.seed = seed
        experiment.seconds = 20
        let result = experiment.run()
        #expect(result.pairs.count > 100)
        let ratio = try #require(result.ratio)
        #expect(ratio <= 0.5, "two-way \(result.twoWayMedianError ?? -1) m against one-way \(result.oneWayMedianError ?? -1) m")
    }

    /// With transmit and receive offsets unrelated, the mean of the two directions still helps,
    /// but only by about 1/√2: the test holds the maths to what it claims, no more.
    @Test func unrelatedOffsetsOnlyAverage() throws {
        var experiment = TwoWayAirExperiment()
        experiment.offsetModel = .independent
        experiment.seconds = 20
        let result = experiment.run()
        let ratio = try #require(result.ratio)
        #expect(ratio < 1)
        #expect(ratio > 0.5)
    }
}
