import Foundation
import LobbyClient
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

    /// Crowd offsets: bob transmits 6 dB above what he advertises and our receiver reads 2 dB
    /// high, so our raw reading puts him nearer than he is by 8 dB of loss. Corrected, one-way
    /// moves the pipeline's distance and interval by the model's factor for 8 dB.
    @Test func oneWayIsCorrectedWithBothEndsOffsets() throws {
        var peers = PeerReadings(maximumAge: 30)
        let bob = RadioOffsets(transmit: 6, receive: -1, transmitError: 1, receiveError: 1)
        peers.setOffsets(bob, for: "bob")
        peers.own = RadioOffsets(transmit: 0, receive: 2, transmitError: 1, receiveError: 1)
        let estimate = peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: 6...13, now: Self.now)
        let n = try #require({ if case .logDistance(let n) = DistanceModel.default { n } else { nil } }())
        let factor = pow(10, 8 / (10 * n))
        #expect(estimate.method == .oneWay)
        #expect(abs((estimate.distance ?? 0) - 9 * factor) < 1e-9)
        let interval = try #require(estimate.interval)
        #expect(abs(interval.lowerBound - 6 * factor) < 1e-9 && abs(interval.upperBound - 13 * factor) < 1e-9)
        // Another player's offsets are not bob's; with none for carol only ours apply.
        let carol = peers.estimate(for: "carol", forward: Self.forward, oneWay: 9, interval: nil, now: Self.now)
        #expect(abs((carol.distance ?? 0) - 9 * pow(10, 2 / (10 * n))) < 1e-9)
        // Forgetting bob (a block) forgets his offsets.
        peers.forget("bob")
        #expect(peers.offsets(of: "bob") == nil)
    }

    /// Two-way with offsets: each direction is corrected with its own transmitter and receiver,
    /// which recovers the true loss exactly when the offsets are the truth.
    @Test func twoWayIsCorrectedDirectionByDirection() throws {
        let truthLoss = 14.0  // dB beyond the 1 m power
        let me = RadioOffsets(transmit: -4, receive: 3, transmitError: 1, receiveError: 1)
        let bob = RadioOffsets(transmit: 5, receive: -6, transmitError: 1, receiveError: 1)
        // r_AB = P_B + t_B + g_A − loss; r_BA = P_A + t_A + g_B − loss.
        let forward = TwoWayRanging.Direction(filteredRSSI: -59 + bob.transmit + me.receive - truthLoss, measuredPower: -59)
        let reverse = TwoWayRanging.Direction(filteredRSSI: -62 + me.transmit + bob.receive - truthLoss, measuredPower: -62)
        var peers = PeerReadings(maximumAge: 30)
        peers.receive(from: "bob", reverse, at: Self.now)
        let uncorrected = peers.estimate(for: "bob", forward: forward, oneWay: nil, interval: nil, now: Self.now)
        peers.own = me
        peers.setOffsets(bob, for: "bob")
        let corrected = peers.estimate(for: "bob", forward: forward, oneWay: nil, interval: nil, now: Self.now)
        let truth = try #require(DistanceModel.default.distance(rssi: -59 - truthLoss, measuredPower: -59))
        #expect(corrected.method == .twoWay)
        #expect(abs((corrected.distance ?? 0) - truth) < 1e-9)
        // Uncorrected, the mean of the two directions is off by (t_A + g_A + t_B + g_B) / 2 = −1 dB.
        #expect(abs((uncorrected.distance ?? 0) - truth) > 0.05 * truth)
    }

    /// Offsets a lobby could not have published (outside ±30 dB, or a negative error) change nothing.
    @Test func implausibleOffsetsAreNotUsed() {
        var peers = PeerReadings(maximumAge: 30)
        peers.setOffsets(RadioOffsets(transmit: 45, receive: 0, transmitError: 1, receiveError: 1), for: "bob")
        #expect(peers.offsets(of: "bob") == nil)
        peers.own = RadioOffsets(transmit: 0, receive: 1, transmitError: -1, receiveError: 1)
        let estimate = peers.estimate(for: "bob", forward: Self.forward, oneWay: 9, interval: 6...13, now: Self.now)
        #expect(estimate == PeerReadings.Estimate(distance: 9, interval: 6...13, method: .oneWay))
    }

    /// A location's crowd-solved exponent is ranged with only when the readings pinned it (a
    /// standard error of 0.3 or less), and an operator's site profile always wins over it.
    @Test func aCrowdExponentIsUsedOnlyWhenPinnedAndNeverOverASiteProfile() {
        func location(site: Double?, crowd: Double, error: Double) -> LobbyLocation {
            LobbyLocation(id: 1, name: "Hall", owner: "owner", beacon: .init(uuid: UUID(), major: 0, minor: 1), timeZone: "UTC",
                          createdAt: Self.now, tournaments: [],
                          siteProfile: site.map { .init(exponent: $0, distances: [1, 3], readings: 40, calibratedAt: Self.now) },
                          crowdProfile: .init(exponent: crowd, exponentError: error, pairs: 12, solvedAt: Self.now, source: .players))
        }
        #expect(NearbyLocations.siteExponent(location(site: nil, crowd: 2.2, error: 0.2)) == 2.2)
        #expect(NearbyLocations.siteExponent(location(site: nil, crowd: 2.2, error: 0.45)) == nil)
        #expect(NearbyLocations.siteExponent(location(site: 3.1, crowd: 2.2, error: 0.1)) == 3.1)
        #expect(NearbyLocations.siteExponent(location(site: nil, crowd: 9, error: 0.1)) == nil)
    }

    @Test func playerEventsCarryTheIntervalAndTheMethodInTheirPlace() throws {
        let event = AgentEvent.playerMoved(.init(player: "bob", name: "Bob", distance: 2.14, interval: 1.4...3.2, ranging: .twoWay, zone: .near),
                                           at: Date(timeIntervalSince1970: 1_790_000_000.25))
        #expect(event.jsonLine == #"{"t":"2026-09-21T14:13:20.250Z","event":"player_moved","player":"bob","name":"Bob","distance_m":2.14,"distance_lo_m":1.40,"distance_hi_m":3.20,"ranging":"two-way","zone":"near"}"#)
        #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(event.jsonLine.utf8)) == event)
        #expect(event.sentence == "Bob (bob) is now 2.1 m (1.4–3.2) away (near)")
    }
}
