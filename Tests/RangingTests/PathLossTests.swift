import Ranging
import Testing

/// The one log-distance formula and its clamp.
@Suite struct PathLossTests {
    @Test func closerThanTheNearestDistanceCountsAsIt() {
        let atNearest = PathLoss.rssi(atDistance: PathLoss.nearest, measuredPower: -59, exponent: 2.8)
        #expect(abs(atNearest - (-59 + 28)) < 1e-9)
        #expect(PathLoss.rssi(atDistance: 0, measuredPower: -59, exponent: 2.8) == atNearest)
        #expect(PathLoss.rssi(atDistance: 0.05, measuredPower: -59, exponent: 2.8) == atNearest)
    }

    @Test func distanceInvertsTheFormulaAndTheModelUsesIt() throws {
        for metres in [0.1, 0.5, 1, 3, 12.5, 100] {
            let rssi = PathLoss.rssi(atDistance: metres, measuredPower: -62, exponent: 2.2)
            #expect(abs(PathLoss.distance(rssi: rssi, measuredPower: -62, exponent: 2.2) - metres) < 1e-9 * metres)
            let model = DistanceModel.logDistance(exponent: 2.2)
            #expect(try #require(model.rssi(atDistance: metres, measuredPower: -62)) == rssi)
            #expect(try #require(model.distance(rssi: rssi, measuredPower: -62)) == PathLoss.distance(rssi: rssi, measuredPower: -62, exponent: 2.2))
        }
    }
}
