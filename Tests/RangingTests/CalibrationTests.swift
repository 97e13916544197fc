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
