import BeaconFrames
import Foundation
import Ranging
import Testing

@Suite struct CalibrationTests {
    @Test func measuredPowerIsTheMedianRoundedHalfUp() {
        #expect(Calibration.measuredPower(readingsAtOneMetre: [-60, -58, -70, -59, -61]) == -60)
        // Median -59.5 rounds toward +∞, as the shared recordings' calibration did.
        #expect(Calibration.measuredPower(readingsAtOneMetre: [-59, -60]) == -59)
        #expect(Calibration.measuredPower(readingsAtOneMetre: []) == nil)
    }

    @Test func fitsTheExponentThatMadeTheReadings() throws {
        var readings: [(distance: Double, rssi: Int)] = []
        for distance in [0.5, 1, 2, 3, 4] {
            let rssi = -59 - 10 * 2.5 * log10(distance)
            for noise in [-2.0, 0, 2] { readings.append((distance, Int((rssi + noise).rounded()))) }
        }
        readings.append((0.0, -20))  // touching: left out
        let n = try #require(Calibration.pathLossExponent(readings: readings, measuredPower: -59))
        #expect(abs(n - 2.5) < 0.1)
        #expect(Calibration.pathLossExponent(readings: [(1, -59)], measuredPower: -59) == nil)
    }

    @Test func receiverOffsetBringsReadingsToTheReference() {
        #expect(Calibration.receiverOffset(readings: [-70, -71, -69], reference: [-64, -65, -66]) == 5)
    }

    @Test func offsetsApplyPerReceiver() {
        let kitchen = Receiver("kitchen"), hall = Receiver("hall")
        let configuration = RangingConfiguration(rssiOffset: 1, receiverOffsets: [kitchen: -4])
        var tracker = ProximityTracker(configuration: configuration)
        var events: [ProximityEvent] = []
        let identity = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 1, low: 1), major: 1, minor: 1)
        let address = BluetoothAddress("C0:FF:EE:00:00:01")!
        for receiver in [kitchen, hall, nil] {
            tracker.observe(Sighting(identity: identity, measuredPower: -59, rssi: -60, time: 0, address: address, receiver: receiver), into: &events)
        }
        let ranges = events.filter { $0.kind == .range }
        #expect(ranges.map(\.rssi) == [-64, -59, -59])
        #expect(ranges.map(\.receiver) == [kitchen, hall, nil])
        #expect(tracker.count == 3, "the same beacon is tracked once per receiver")
    }
}

@Suite struct SiteProfileTests {
    /// Readings made with a known exponent and a receiver reading 4 dB weak, with noise: the fit
    /// finds both.
    @Test(arguments: [(2.3, -4.0), (1.7, 3.0), (3.4, 0.0)])
    func fitsTheExponentAndOffsetThatMadeTheReadings(exponent: Double, weakBy offset: Double) throws {
        // Noise spread evenly over ±4 dB at each spot (not drawn at random: the bounds below are
        // tight, and an unlucky draw would fail a fit that is right).
        var readings: [(distance: Double, rssi: Int, measuredPower: Int)] = []
        for distance in [1.0, 3.0] {
            for i in 0..<400 {
                let noise = -4 + 8 * (Double(i) + 0.5) / 400
                let rssi = -59 - 10 * exponent * log10(distance) + offset + noise
                readings.append((distance, Int(rssi.rounded()), -59))
            }
        }
        let profile = try Calibration.siteProfile(readings: readings)
        #expect(abs(profile.exponent - exponent) < 0.15, "exponent \(profile.exponent)")
        #expect(abs(profile.rssiOffset + offset) < 0.7, "offset \(profile.rssiOffset)")
        #expect(profile.distances == [1, 3] && profile.readings == 800)
        // Applied, the profile turns the median reading at 3 m back into 3 m.
        let configured = profile.applied(to: RangingConfiguration())
        let atThree = -59 - 10 * exponent * log10(3) + offset + configured.rssiOffset
        let distance = try #require(configured.distanceModel.distance(rssi: atThree, measuredPower: -59))
        #expect(abs(distance - 3) < 0.35)
    }

    @Test func poolsBeaconsOfDifferentMeasuredPowers() throws {
        let readings: [(distance: Double, rssi: Int, measuredPower: Int)] = [
            (1, -59, -59), (1, -70, -70), (2, -65, -59), (2, -76, -70), (4, -71, -59), (4, -82, -70),
        ]
        let profile = try Calibration.siteProfile(readings: readings)
        #expect(abs(profile.exponent - 6 / (10 * log10(2.0))) < 0.01)
        #expect(abs(profile.rssiOffset) < 0.01)
    }

    @Test func refusesOneDistanceAndImpossibleExponents() {
        #expect(throws: CalibrationError.tooFewDistances([1])) {
            try Calibration.siteProfile(readings: [(1, -59, -59), (1, -60, -59), (0.1, -40, -59)])
        }
        // Stronger farther away: a negative exponent.
        #expect(throws: CalibrationError.implausibleExponent(-2)) {
            try Calibration.siteProfile(readings: [(1, -59, -59), (10, -39, -59)])
        }
        #expect(CalibrationError.tooFewDistances([1]).description.contains("two or more distances"))
    }
}

@Suite struct SitePriorTests {
    /// Two spots read 3 dB off the site's line each way: the plain fit swings the exponent; the
    /// prior holds it near 2.8 by as much as 6 dB of shadowing per spot warrants, and gives way
    /// to many distances that agree.
    @Test func priorShrinksTwoSpotsButNotManyAgreeingOnes() throws {
        let twoSpots: [(distance: Double, rssi: Int, measuredPower: Int)] = [(1, -59 + 3, -59), (3, -59 - 13 - 3, -59)]
        let plain = try Calibration.siteProfile(readings: twoSpots)
        let shrunk = try Calibration.siteProfile(readings: twoSpots, prior: SitePrior())
        #expect(plain.exponent > 3.9)
        #expect(abs(shrunk.exponent - 2.8) < abs(plain.exponent - 2.8) / 4)
        // Ten distances from 0.5 to 8 m, exactly on an exponent-2 line: the data wins.
        let many = (0..<10).map { i -> (distance: Double, rssi: Int, measuredPower: Int) in
            let distance = 0.5 * pow(16, Double(i) / 9)
            return (distance, Int((-59 - 20 * log10(distance)).rounded()), -59)
        }
        let fitted = try Calibration.siteProfile(readings: many, prior: SitePrior(shadowing: 1))
        #expect(abs(fitted.exponent - 2) < 0.1, "\(fitted.exponent)")
    }
}
