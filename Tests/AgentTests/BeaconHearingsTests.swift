import Agent
import BeaconFrames
import Foundation
import LobbyClient
import Testing

/// What a placed location beacon reports of what it hears: location identities only (never a
/// player's), each with its mean RSSI and the variance of that mean.
@Suite struct BeaconHearingsTests {
    static let locationUUID = BeaconUUID("8A1F0000-0000-4000-8000-00000000CAFE")!
    static let deploymentUUID = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func sighting(_ identity: BeaconIdentity, rssi: Int?, power: Int? = -59) -> Sighting {
        Sighting(identity: identity, measuredPower: power, rssi: rssi, time: 0, address: BluetoothAddress(1, 2, 3, 4, 5, 6))
    }

    @Test func keepsLocationsOnlyAndReportsTheMeanWithItsVariance() throws {
        var hearings = BeaconHearings(locationUUID: Self.locationUUID, staticUUID: Self.deploymentUUID)
        let hall = BeaconIdentity.iBeacon(uuid: Self.locationUUID, major: 7, minor: 9)
        let oldHall = BeaconIdentity.iBeacon(uuid: Self.deploymentUUID, major: 0, minor: 3)
        let player = BeaconIdentity.iBeacon(uuid: Self.deploymentUUID, major: 4, minor: 1)
        let stranger = BeaconIdentity.iBeacon(uuid: BeaconUUID("11111111-2222-3333-4444-555555555555")!, major: 1, minor: 1)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (k, rssi) in [-70, -72, -74, -76].enumerated() {
            hearings.add(Self.sighting(hall, rssi: rssi), at: start.addingTimeInterval(Double(k)))
        }
        hearings.add(Self.sighting(oldHall, rssi: -60), at: start)
        hearings.add(Self.sighting(player, rssi: -50), at: start)
        hearings.add(Self.sighting(stranger, rssi: -50), at: start)
        hearings.add(Self.sighting(hall, rssi: nil), at: start)
        hearings.add(Self.sighting(oldHall, rssi: -61, power: nil), at: start)
        let taken = hearings.take()
        #expect(taken.count == 2, "\(taken)")
        // The loudest first: the old hall, one reading, the variance of a single one.
        let loud = try #require(taken.first)
        #expect(loud.major == 0 && loud.minor == 3 && loud.rssi == -60 && loud.rssiVariance == BeaconHearings.singleReadingVariance)
        let quiet = try #require(taken.last)
        #expect(quiet.major == 7 && quiet.minor == 9 && quiet.rssi == -73 && quiet.measuredPower == -59)
        // Sample variance 6.67 dB² over 4 readings: 1.67.
        #expect(abs((quiet.rssiVariance ?? 0) - 20.0 / 3 / 4) < 1e-9)
        #expect(quiet.at == start.addingTimeInterval(3) && quiet.distance == nil)
        #expect(hearings.isEmpty && hearings.take().isEmpty, "taken once")
        // Readings all alike keep at least 1 dB² (readings a moment apart are not independent).
        for _ in 0..<50 { hearings.add(Self.sighting(hall, rssi: -80), at: start) }
        #expect(hearings.take().first?.rssiVariance == 1)
    }

    @Test func reportsAtMostTheLimitLoudestFirst() {
        var hearings = BeaconHearings(locationUUID: Self.locationUUID, staticUUID: nil)
        for minor in 0..<150 {
            hearings.add(Self.sighting(.iBeacon(uuid: Self.locationUUID, major: 1, minor: UInt16(minor)), rssi: -100 + minor / 3), at: Date())
        }
        let taken = hearings.take(limit: 100)
        #expect(taken.count == 100)
        let quietestKept = Double(-100 + 50 / 3)
        #expect(taken.allSatisfy { ($0.rssi ?? -200) >= quietestKept }, "the quietest 50 are left out")
    }
}
