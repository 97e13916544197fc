import Foundation
import BeaconFrames
import Ranging
import Testing

@Suite struct DistanceTests {
    @Test func logDistanceIsOneMetreAtTheMeasuredPowerAndScalesByTheExponent() throws {
        let model = DistanceModel.logDistance(exponent: 2)
        #expect(try #require(model.distance(rssi: -59, measuredPower: -59)) == 1)
        #expect(abs(try #require(model.distance(rssi: -79, measuredPower: -59)) - 10) < 1e-9)
        #expect(abs(try #require(DistanceModel.logDistance(exponent: 3).distance(rssi: -89, measuredPower: -59)) - 10) < 1e-9)
    }

    @Test func refusesUnusableMeasuredPower() {
        #expect(DistanceModel.default.distance(rssi: -60, measuredPower: 0) == nil)
        #expect(DistanceModel.default.distance(rssi: -60, measuredPower: 12) == nil)
        #expect(DistanceModel.altBeaconCurve(.nexus5).distance(rssi: -60, measuredPower: 59) == nil)
    }

    /// The AltBeacon-curve option against the other libraries' own expectations
    /// (../shared/data/distance-vectors.json): same curve form, their coefficients.
    @Test func altBeaconCurveMatchesTheLibraries() throws {
        let shared = ProcessInfo.processInfo.environment["NEARPLAY_SHARED_DATA"].map(URL.init(fileURLWithPath:))
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/data")
        let data = try Data(contentsOf: shared.appendingPathComponent("distance-vectors.json"))
        let vectors = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(vectors.count == 12)
        var checked = 0
        for vector in vectors {
            let id = vector["id"] as! String
            let power = (vector["measured_power"] as! NSNumber).doubleValue
            let rssi = (vector["rssi"] as! NSNumber).doubleValue
            let model = vector["model"] as! String
            let curve: AltBeaconCurve = model.contains("Moto X Pro") ? AltBeaconCurve(c1: 0.9401940951, c2: 6.170094565, c3: 0)
                : model.contains("Nexus 5") ? .nexus5 : AltBeaconCurve(c1: 0.89976, c2: 7.7095, c3: 0.111)
            let ours = DistanceModel.altBeaconCurve(curve).distance(rssi: rssi, measuredPower: power)
            let expected = (vector["expect_m"] as? NSNumber)?.doubleValue
            if power >= 0 || rssi >= 0 {
                // ibeacon-ble computes on a positive "power" or returns None for RSSI 0; a positive
                // measured power is not a 1 m calibration, so Nearplay gives no distance.
                #expect(ours == nil, "\(id)")
            } else if id.hasSuffix("dist-9") || id.hasSuffix("dist-10") {
                // Rounded through the parser: 1 and 3 m.
                #expect(ours.map { $0.rounded() } == expected, "\(id)")
            } else if expected == 400 {
                // ibeacon-ble caps at 400 m; the curve itself gives astronomical values (10^11 m),
                // which Nearplay reports as no distance (beyond 10 km).
                #expect(ours == nil, "\(id)")
            } else {
                let tolerance = (vector["tol_m"] as? NSNumber)?.doubleValue ?? 1e-6
                #expect(abs((ours ?? -1) - (expected ?? 0)) <= tolerance, "\(id): \(String(describing: ours)) vs \(String(describing: expected))")
            }
            checked += 1
        }
        #expect(checked == 12)
    }
}

@Suite struct ZoneTests {
    @Test func classifiesLikeCoreLocation() {
        #expect(Zone.of(distance: 0.3) == .immediate)
        #expect(Zone.of(distance: 0.5) == .near)
        #expect(Zone.of(distance: 2.99) == .near)
        #expect(Zone.of(distance: 3) == .far)
        #expect(Zone.of(distance: nil) == .unknown)
    }

    /// Zones followed on the filtered RSSI (thresholds from the model's inverse) are the zones
    /// followed on distances, for both models, through random walks of readings.
    @Test(arguments: [DistanceModel.default, .logDistance(exponent: 2), .altBeaconCurve(.nexus5)])
    func rssiThresholdsGiveTheSameZonesAsDistances(model: DistanceModel) throws {
        let zones = ZoneBoundaries()
        var state: UInt64 = 77
        for power in [-45.0, -59, -74] {
            let thresholds = try #require(zones.thresholds(model: model, measuredPower: power))
            var byDistance = Zone.unknown, byRSSI = Zone.unknown
            var rssi = power
            for _ in 0..<20_000 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                rssi = min(-5, max(-120, rssi + Double(Int(state >> 60) - 8) * 0.37))
                byDistance = zones.next(from: byDistance, distance: model.distance(rssi: rssi, measuredPower: power))
                byRSSI = zones.next(from: byRSSI, rssi: rssi, thresholds: thresholds)
                // The AltBeacon curve's jump at the measured power aside, the two agree exactly.
                if abs(rssi - power) > 0.01 { #expect(byDistance == byRSSI, "\(model) at \(rssi) dBm, power \(power)") }
                byRSSI = byDistance
            }
        }
    }

    @Test func hysteresisKeepsABoundaryBeaconFromFlapping() {
        let zones = ZoneBoundaries()
        var zone = Zone.near
        var changes = 0
        // Jitter of ±0.25 m around the 3 m boundary: within the 10 % margin.
        for i in 0..<1000 {
            let next = zones.next(from: zone, distance: 3 + (i.isMultiple(of: 2) ? 0.25 : -0.25))
            if next != zone { changes += 1 }
            zone = next
        }
        #expect(changes == 0)
        #expect(zones.next(from: .near, distance: 3.4) == .far)
        #expect(zones.next(from: .far, distance: 2.8) == .far)
        #expect(zones.next(from: .far, distance: 2.6) == .near)
        #expect(zones.next(from: .immediate, distance: 0.52) == .immediate)
        #expect(zones.next(from: .immediate, distance: 0.6) == .near)
        #expect(zones.next(from: .near, distance: nil) == .unknown)
        // Without a margin the same jitter flaps at every reading.
        #expect(ZoneBoundaries(margin: 0).next(from: .near, distance: 3.01) == .far)
    }
}

/// A tracker told to range with another model mid-run (an agent at a calibrated site).
@Suite struct DistanceModelChangeTests {
    @Test func aNewModelAppliesFromTheNextReadingWithoutLosingTheTrack() throws {
        var tracker = ProximityTracker(configuration: RangingConfiguration(filter: .arma(coefficient: 1)))
        var events: [ProximityEvent] = []
        let identity = BeaconIdentity.iBeacon(uuid: BeaconUUID(high: 7, low: 7), major: 1, minor: 2)
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:07"))
        func hear(at time: Double) -> ProximityEvent? {
            events.removeAll()
            tracker.observe(Sighting(identity: identity, measuredPower: -59, rssi: -72, time: time, address: address), into: &events)
            return events.last { $0.kind == .range }
        }
        // 13 dB below the 1 m power: 10^(13/28) = 2.91 m with the default n = 2.8, near.
        let before = try #require(hear(at: 0))
        #expect(abs(try #require(before.distance) - 2.914) < 0.01 && before.zone == .near)
        // The site's n = 2 makes the same reading 10^(13/20) = 4.47 m, far (past near's 3.3 m margin).
        tracker.setDistanceModel(.logDistance(exponent: 2))
        #expect(tracker.configuration.distanceModel == .logDistance(exponent: 2))
        let after = try #require(hear(at: 0.1))
        #expect(abs(try #require(after.distance) - 4.467) < 0.01 && after.zone == .far)
        #expect(tracker.count == 1 && events.allSatisfy { $0.kind == .range }, "the beacon neither left nor entered again")
        let interval = try #require(after.distanceInterval)
        #expect(interval.contains(4.467))
        // And back: 2.91 m and near again, as a tracker that never ranged with n = 2 says; the
        // zones' hysteresis (far until below 2.7 m) is for noise, not for a change of model.
        tracker.setDistanceModel(.default)
        #expect(tracker.track(identity)?.zone == .near, "the zone follows the model at once")
        let back = try #require(hear(at: 0.2))
        #expect(abs(try #require(back.distance) - 2.914) < 0.01 && back.zone == .near)
    }
}
