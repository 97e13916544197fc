import Foundation
import Ranging
import Testing

@Suite struct TwoWayRangingTests {
    static let model = DistanceModel.logDistance(exponent: 2.8)

    /// A reads 6 dB high and advertises 6 dB high (its own receiver measured its 1 m power);
    /// B reads 3 dB low and advertises 3 dB low. At 4 m each direction alone is off; the mean
    /// of the two losses is the true one.
    @Test func offsetsOfSelfCalibratedDevicesCancel() throws {
        let trueLoss = 10 * 2.8 * log10(4.0)
        let gainA = 6.0, gainB = -3.0
        let powerA = -59 + gainA, powerB = -59 + gainB
        // A hears B: B's true power (−59) through A's receiver; and the other way round.
        let forward = TwoWayRanging.Direction(filteredRSSI: -59 - trueLoss + gainA, measuredPower: powerB)
        let reverse = TwoWayRanging.Direction(filteredRSSI: -59 - trueLoss + gainB, measuredPower: powerA)
        let one = try #require(TwoWayRanging.estimate(forward: forward, reverse: nil, model: Self.model, uncertainty: .init()))
        let two = try #require(TwoWayRanging.estimate(forward: forward, reverse: reverse, model: Self.model, uncertainty: .init()))
        #expect(abs(one.distance - 4) > 1)
        #expect(abs(two.distance - 4) < 1e-9)
        #expect(two.interval?.contains(4) == true)
    }

    /// Without the peer's reading the estimate is the one-way one, interval included.
    @Test func fallsBackToOneWayWithoutThePeersReading() throws {
        let forward = TwoWayRanging.Direction(filteredRSSI: -70, measuredPower: -59, filterVariance: 2)
        let one = try #require(TwoWayRanging.estimate(forward: forward, reverse: nil, model: Self.model, uncertainty: .init()))
        #expect(one.distance == Self.model.distance(rssi: -70, measuredPower: -59))
        let spread = RangingUncertainty().spread(rssi: -70, measuredPower: -59, model: Self.model, filterVariance: 2)
        #expect(one.interval == Self.model.interval(rssi: -70, measuredPower: -59, spread: spread))
    }
}
