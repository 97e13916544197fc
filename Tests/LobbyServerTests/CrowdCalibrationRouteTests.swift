import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing
@testable import Lobby
@testable import LobbyServer

/// The crowd calibration over HTTP: readings posted as encounter reports, the solve, and the
/// offsets as `GET /v1/players/me/radio-offsets` and a resolved profile show them.
@Suite struct CrowdCalibrationRouteTests {
    @Test func servesSolvedOffsetsAndShowsThemInTheProfileABeaconResolvesTo() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            var players: [(token: String, major: Int, minor: Int)] = []
            for name in ["ann", "ben", "cat", "dan"] { players.append(try await client.player(name)) }
            let before = try await client.call(.get, "/v1/players/me/radio-offsets", token: players[0].token)
            #expect(before.status == .notFound && errorCode(before.body) == "radioOffsetsNotSolved", "\(before.body)")
            try await Self.exchangeReadings(client, players)
            let summary = try await server.store.solveCrowdCalibration()
            #expect(summary.pairs == 6 && summary.exchanges == 6 && summary.published == 4)

            let offsets = try await client.call(.get, "/v1/players/me/radio-offsets", token: players[0].token)
            #expect(offsets.status == .ok, "\(offsets.body)")
            #expect(offsets.body["pairs"] as? Int == 3)
            for key in ["transmit", "receive", "transmitError", "receiveError"] {
                #expect((offsets.body[key] as? NSNumber) != nil, "\(key) in \(offsets.body)")
            }
            #expect(offsets.body["solvedAt"] is String)
            let profile = try await client.call(
                .get, "/v1/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/\(players[0].major)/\(players[0].minor)", token: players[1].token)
            #expect(profile.status == .ok, "\(profile.body)")
            let shown = try #require(profile.body["radioOffsets"] as? [String: Any])
            #expect((shown["transmit"] as? NSNumber)?.doubleValue == (offsets.body["transmit"] as? NSNumber)?.doubleValue)
            #expect((shown["receive"] as? NSNumber)?.doubleValue == (offsets.body["receive"] as? NSNumber)?.doubleValue)
        }
    }

    /// The server's periodic solve publishes offsets with nobody asking; an interval of 0 runs none.
    @Test(.timeLimit(.minutes(2))) func theServerSolvesEveryIntervalOnItsOwn() async throws {
        #expect(PeriodicService.crowdCalibrator(store: try await TestServer { $0.crowdCalibrationInterval = 0 }.store,
                                                logger: Logger(label: "test")) == nil)
        let server = try await TestServer { $0.crowdCalibrationInterval = 0.05 }
        let calibrator = try #require(PeriodicService.crowdCalibrator(store: server.store, logger: Logger(label: "test")))
        try await server.application.test(.router) { client in
            var players: [(token: String, major: Int, minor: Int)] = []
            for name in ["ann", "ben", "cat", "dan"] { players.append(try await client.player(name)) }
            try await Self.exchangeReadings(client, players)
            let group = ServiceGroup(configuration: .init(services: [calibrator], logger: Logger(label: "test")))
            let running = Task { try await group.run() }
            var solved = false
            for _ in 0..<500 where !solved {
                try await Task.sleep(for: .milliseconds(20))
                solved = try await client.call(.get, "/v1/players/me/radio-offsets", token: players[2].token).status == .ok
            }
            #expect(solved, "no solve published offsets")
            await group.triggerGracefulShutdown()
            try await running.value
        }
    }

    /// Each of `players` reports a reading of each other one at once: one exchange per pair.
    static func exchangeReadings(_ client: some TestClientProtocol, _ players: [(token: String, major: Int, minor: Int)]) async throws {
        let now = Date().formatted(Date.ISO8601FormatStyle())
        for (i, reader) in players.enumerated() {
            let sightings = players.enumerated().filter { $0.offset != i }.map { j, seen in
                #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":\#(seen.major),"minor":\#(seen.minor),"distance":2,"at":"\#(now)","rssi":\#(-65 - 2 * i + j),"measuredPower":-59,"rssiVariance":1}"#
            }
            let answer = try await client.call(.post, "/v1/encounters", token: reader.token,
                                               json: #"{"sightings":[\#(sightings.joined(separator: ","))]}"#)
            #expect(answer.status == .ok && answer.body["recorded"] as? Int == 3, "\(answer.body)")
        }
    }
}

/// Location beacons placed and heard over HTTP: the owner places two, each reports the other,
/// and the location shows where it stands; strangers are answered as if it were not there.
@Suite struct BeaconCalibrationRouteTests {
    @Test func ownersPlaceBeaconsAndReportWhatTheyHear() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let owner = try await client.player("owner")
            let stranger = try await client.player("stranger")
            var ids: [Int64] = []
            for name in ["East", "West"] {
                let made = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"\#(name)"}"#)
                ids.append(try #require((made.body["id"] as? NSNumber)?.int64Value, "\(made.body)"))
            }
            let unplaced = try await client.call(.post, "/v1/locations/\(ids[0])/hearings", token: owner.token, json: #"{"hearings":[]}"#)
            #expect(unplaced.status == .conflict && errorCode(unplaced.body) == "locationNotPlaced", "\(unplaced.body)")
            for (id, x) in zip(ids, [0.0, 6.5]) {
                let placed = try await client.call(.put, "/v1/locations/\(id)/position", token: owner.token,
                                                   json: #"{"site":"Hall","x":\#(x),"y":2}"#)
                #expect(placed.status == .ok, "\(placed.body)")
                let position = try #require(placed.body["position"] as? [String: Any], "\(placed.body)")
                #expect(position["site"] as? String == "Hall" && (position["x"] as? NSNumber)?.doubleValue == x && position["placedAt"] is String)
            }
            let outOfRange = try await client.call(.put, "/v1/locations/\(ids[0])/position", token: owner.token, json: #"{"site":"Hall","x":5000,"y":0}"#)
            #expect(outOfRange.status == .badRequest && errorCode(outOfRange.body) == "invalidField", "\(outOfRange.body)")
            let foreign = try await client.call(.put, "/v1/locations/\(ids[0])/position", token: stranger.token, json: #"{"site":"Hall","x":1,"y":1}"#)
            #expect(foreign.status == .notFound && errorCode(foreign.body) == "locationNotFound", "\(foreign.body)")

            // Each hears the other's identity of the running period, after both were placed
            // (a hearing from before a beacon stood where it stands does not count).
            try await Task.sleep(for: .milliseconds(20))
            let stamp = ISO8601DateFormatter()
            stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var receipts: [[String: Any]] = []
            for (listener, heard) in [(ids[0], ids[1]), (ids[1], ids[0])] {
                let beacon = try #require(try await server.store.currentLocationBeacon(heard, at: server.store.clock.now()))
                guard case let .iBeacon(uuid, major, minor) = beacon else { Issue.record("not an iBeacon"); return }
                let at = stamp.string(from: server.store.clock.now())
                let answer = try await client.call(.post, "/v1/locations/\(listener)/hearings", token: owner.token, json: """
                    {"hearings":[{"uuid":"\(uuid)","major":\(major),"minor":\(minor),"at":"\(at)","rssi":-75.5,"measuredPower":-59,"rssiVariance":2}]}
                    """)
                #expect(answer.status == .ok, "\(answer.body)")
                receipts.append(answer.body)
            }
            #expect(receipts.map { $0["recorded"] as? Int } == [1, 1] && receipts.map { $0["exchanges"] as? Int } == [0, 1], "\(receipts)")
            let strangers = try await client.call(.post, "/v1/locations/\(ids[0])/hearings", token: stranger.token, json: #"{"hearings":[]}"#)
            #expect(strangers.status == .notFound && errorCode(strangers.body) == "locationNotFound", "\(strangers.body)")
            let removed = try await client.call(.delete, "/v1/locations/\(ids[1])/position", token: owner.token)
            #expect(removed.status == .ok && removed.body["position"] == nil, "\(removed.body)")
        }
    }
}
