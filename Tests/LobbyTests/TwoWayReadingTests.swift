import BeaconFrames
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Two-way ranging through the lobby: readings ride on encounter reports, are kept with the
/// encounter and reach the player seen as `peerReading` events.
@Suite struct TwoWayReadingTests {
    static func sighting(_ beacon: BeaconIdentity, at time: Date, rssi: Double? = nil, measuredPower: Double? = nil,
                         variance: Double? = nil) -> EncounterReport {
        EncounterReport(beacon, distance: 2, at: time,
                        rssi: rssi, measuredPower: measuredPower.map(MeasuredPower.init(dBm:)), rssiVariance: variance)
    }

    @Test func deliversTheReportersReadingToThePlayerSeenAndKeepsIt() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        let receipt = try await lobby.store.recordEncounters(reporter: alice, [
            Self.sighting(bobPlayer.beacon, at: lobby.clock.now(), rssi: -71.5, measuredPower: -59, variance: 0.8),
        ])
        #expect(receipt == EncounterReceipt(recorded: 1, ignored: 0))
        let events = try await lobby.store.events(bob, after: 0).filter { $0.kind == .peerReading }
        let event = try #require(events.first)
        #expect(events.count == 1)
        #expect(event.data.player == "alice")
        #expect(event.data.rssi == -71.5)
        #expect(event.data.measuredPower?.dBm == -59)
        #expect(event.data.rssiVariance == 0.8)
        // The reporter hears nothing of its own reading.
        #expect(try await lobby.store.events(alice, after: 0).allSatisfy { $0.kind != .peerReading })
        let stored = try await lobby.store.database.read { db in
            try db.fetchOne("SELECT rssi, measuredPower, rssiVariance FROM encounter WHERE observerId = ? AND seenId = ?", alice, bob)
        }
        #expect(try stored?.get(0, as: Double.self) == -71.5)
        #expect(try stored?.get(1, as: Double.self) == -59)
        #expect(try stored?.get(2, as: Double.self) == 0.8)
    }

    @Test func aReportWithoutReadingsSendsNoEvent() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        _ = try await lobby.store.recordEncounters(reporter: alice, [Self.sighting(bobPlayer.beacon, at: lobby.clock.now())])
        #expect(try await lobby.store.events(bob, after: 0).allSatisfy { $0.kind != .peerReading })
    }

    @Test func blockedPlayersGetNoReadings() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        try await lobby.store.block(bob, username: "alice")
        _ = try await lobby.store.recordEncounters(reporter: alice, [
            Self.sighting(bobPlayer.beacon, at: lobby.clock.now(), rssi: -70, measuredPower: -59),
        ])
        #expect(try await lobby.store.events(bob, after: 0).allSatisfy { $0.kind != .peerReading })
    }

    @Test func rejectsHalfAReadingAndOutOfRangeValuesNamingTheField() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let bob = try await lobby.player("bob").player.beacon
        let now = lobby.clock.now()
        let cases: [(EncounterReport, String)] = [
            (Self.sighting(bob, at: now, rssi: -70), "sightings[0].measuredPower"),
            (Self.sighting(bob, at: now, measuredPower: -59), "sightings[0].rssi"),
            (Self.sighting(bob, at: now, rssi: 40, measuredPower: -59), "sightings[0].rssi"),
            (Self.sighting(bob, at: now, rssi: .nan, measuredPower: -59), "sightings[0].rssi"),
            (Self.sighting(bob, at: now, rssi: -70, measuredPower: -129), "sightings[0].measuredPower"),
            (Self.sighting(bob, at: now, rssi: -70, measuredPower: -59, variance: -1), "sightings[0].rssiVariance"),
            (Self.sighting(bob, at: now, variance: 1), "sightings[0].rssiVariance"),
        ]
        for (sighting, field) in cases {
            let error = await #expect(throws: LobbyError.self) { try await lobby.store.recordEncounters(reporter: alice, [sighting]) }
            #expect(error?.message.hasPrefix(field) == true, "\(error?.message ?? "no error") should name \(field)")
        }
    }
}
