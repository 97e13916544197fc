import Foundation
import Ranging
import Testing

@Suite struct FittedSpreadTests {
    static let fitted = FittedSpread.developmentFamilies
    /// Path loss (dB) at `metres` with n = 2.8.
    static func loss(_ metres: Double) -> Double { 28 * log10(metres) }

    /// Near 1 m both sides are small; at 4 m the truth lies farther, not nearer; under 0.5 m
    /// the nearer side is wide enough to reach a touching beacon.
    @Test func sidesFollowThePathLossTable() {
        let atOneMetre = Self.fitted.sides(pathLoss: 0, filterVariance: 0, readings: 1000)
        #expect(abs(atOneMetre.nearer - 7.5) < 1e-9)
        #expect(abs(atOneMetre.farther - (9 + 16 * 8 / 1000.0).squareRoot()) < 1e-9)
        let atFour = Self.fitted.sides(pathLoss: Self.loss(4), filterVariance: 0, readings: 1000)
        #expect(atFour.nearer < 1e-9 && atFour.farther > 15)
        let atHalf = Self.fitted.sides(pathLoss: Self.loss(0.5), filterVariance: 0, readings: 1000)
        #expect(atHalf.nearer > 14.9)
    }

    /// The filter's variance widens both sides; a young track only the farther one.
    @Test func filterVarianceWidensBothSidesAndFewReadingsTheFartherOne() {
        let settled = Self.fitted.sides(pathLoss: 10, filterVariance: 0, readings: 1000)
        let uncertain = Self.fitted.sides(pathLoss: 10, filterVariance: 16, readings: 1000)
        #expect(uncertain.nearer > settled.nearer && uncertain.farther > settled.farther)
        let young = Self.fitted.sides(pathLoss: 10, filterVariance: 0, readings: 2)
        #expect(young.nearer == settled.nearer && young.farther > settled.farther)
        #expect(Self.fitted.sides(pathLoss: 10, filterVariance: 0, readings: 8).farther
                == Self.fitted.sides(pathLoss: 10, filterVariance: 0, readings: 1).farther)
    }

    @Test func tableIsLinearBetweenKnotsAndFlatBeyondThem() {
        let spread = FittedSpread(knots: [.init(pathLoss: 10, nearer: 4, farther: 8), .init(pathLoss: 0, nearer: 2, farther: 2)],
                                  fewReadings: 0, fewReadingsScale: 1)
        for (loss, nearer, farther) in [(5.0, 3.0, 5.0), (-20, 2, 2), (40, 4, 8)] {
            let sides = spread.sides(pathLoss: loss, filterVariance: 0, readings: 1)
            #expect(sides.nearer == nearer && sides.farther == farther, "at \(loss) dB: \(sides)")
        }
    }

    /// A lower end at or within 10 cm is reported as 0: the loss model cannot tell a touching
    /// beacon from one 10 cm away.
    @Test func lowerEndWithinTenCentimetresIsZero() throws {
        let model = DistanceModel.logDistance(exponent: 2.8)
        let touching = try #require(model.interval(rssi: -59, measuredPower: -59, nearer: 30, farther: 3))
        #expect(touching.lowerBound == 0)
        let near = try #require(model.interval(rssi: -59, measuredPower: -59, nearer: 14, farther: 3))
        #expect(abs(near.lowerBound - pow(10, -0.5)) < 1e-9)
        #expect(abs(near.upperBound - pow(10, 3 / 28.0)) < 1e-9)
    }

    /// Range events use the fitted spread by default, the symmetric one when built from parts.
    @Test func rangeEventsUseTheFittedSpreadByDefault() throws {
        #expect(RangingUncertainty().fitted == .developmentFamilies)
        #expect(RangingUncertainty(shadowing: 6).fitted == nil)
    }
}
