import Foundation
import Ranging
import Testing
@testable import Agent

/// The agent's two-way ranging: which direction readings it combines, and when it falls back.
@Suite struct PeerReadingsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// We read the peer 10 dB low; the peer reads us 10 dB high: the mean loss is the true one.
    static let forward = TwoWayRanging.Direction(filteredRSSI: -81.4, measuredPower: -59)
    static let reverse = TwoWayRanging.Direction(filteredRSSI: -61.4, measuredPower: -59)

    @Test func combinesARecentPeerReadingWithOurs() {
        var peers = PeerReadings(maximumAge: 30)
        peers.receive(from: "bob", Self.reverse, at: Self.now.addingTimeInterval(-5))
        let estimate = peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: 6...13, now: Self.now)
        #expect(estimate.method == .twoWay)
        let truth = try! #require(DistanceModel.default.distance(rssi: -71.4, measuredPower: -59))
        #expect(abs((estimate.distance ?? 0) - truth) < 1e-9)
        let interval = try! #require(estimate.interval)
        #expect(interval.contains(truth))
    }

    @Test func fallsBackToOneWayWhenThePeerReadingIsMissingOrStale() {
        var peers = PeerReadings(maximumAge: 30)
        var estimate = peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: 6...13, now: Self.now)
        #expect(estimate == PeerReadings.Estimate(distance: 9, interval: 6...13, method: .oneWay))
        peers.receive(from: "bob", Self.reverse, at: Self.now.addingTimeInterval(-31))
        estimate = peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: 6...13, now: Self.now)
        #expect(estimate.method == .oneWay)
        // Another player's reading is not bob's.
        peers.receive(from: "carol", Self.reverse, at: Self.now)
        #expect(peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: nil, now: Self.now).method == .oneWay)
        // An older reading arriving late does not replace a newer one.
        peers.receive(from: "bob", Self.reverse, at: Self.now)
        peers.receive(from: "bob", TwoWayRanging.Direction(filteredRSSI: -90, measuredPower: -59), at: Self.now.addingTimeInterval(-10))
        #expect(peers.reading(from: "bob", now: Self.now) == Self.reverse)
    }

    @Test func playerEventsCarryTheIntervalAndTheMethodInTheirPlace() throws {
        let event = AgentEvent.playerMoved(.init(player: "bob", name: "Bob", distance: 2.14, interval: 1.4...3.2, ranging: .twoWay, zone: .near),
                                           at: Date(timeIntervalSince1970: 1_790_000_000.25))
        #expect(event.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"player_moved","player":"bob","name":"Bob","distance_m":2.14,"distance_lo_m":1.40,"distance_hi_m":3.20,"ranging":"two-way","zone":"near"}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(event.jsonLine.utf8)) == event)
        #expect(event.sentence == "Bob (bob) is now 2.1 m (1.4–3.2) away (near)")
    }
}
