import Foundation
import GRDB
import HummingbirdWSClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import Lobby
@testable import LobbyServer

/// Issue 21, availability 4: one report makes one peer reading per player seen, the feed is pruned
/// by age, and a WebSocket client that falls behind loses no event.
@Suite struct EventAttackTests {
    // MARK: Availability 4: peer readings coalesced, events pruned, a slow WebSocket client loses nothing

    @Test func oneReportWithManyReadingsOfAPlayerGivesThatPlayerOneReading() async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            let alice = try await client.player("alice")
            let bob = try await client.player("bob")
            let me = try await client.call(.get, "/v1/players/me", token: bob)
            let beacon = try #require(me.body["beacon"] as? [String: Any])
            let sightings = (0..<1000).map { n in
                let at = Date().addingTimeInterval(Double(n) / 1000 - 2).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                return #"{"uuid":"\#(beacon["uuid"] ?? "")","major":\#(beacon["major"] ?? 0),"minor":\#(beacon["minor"] ?? 0),"#
                    + #""distance":1.2,"at":"\#(at)","rssi":\#(-60 - n % 20),"measuredPower":-59}"#
            }
            let report = try await client.call(.post, "/v1/encounters", token: alice, json: #"{"sightings":[\#(sightings.joined(separator: ","))]}"#)
            #expect(report.status == 200, "\(report.body)")
            let feed = try await client.call(.get, "/v1/events?after=0&limit=1000", token: bob)
            let readings = (feed.body["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "peerReading" }
            #expect(readings.count == 1, "one report made \(readings.count) peerReading events")
            #expect((readings.first?["data"] as? [String: Any])?["rssi"] as? Double == -79, "the newest reading")
        }
    }

    @Test func eventsArePrunedByAge() async throws {
        let server = try await TestServer { $0.eventRetention = 60; $0.peerReadingRetention = 10 }
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            let bob = try await client.player("bob")
            let bobId = try await server.store.authenticate(token: bob.token)
            let old = Date().addingTimeInterval(-120)
            let recent = Date().addingTimeInterval(-30)
            try await server.store.write { context in
                for (at, kind) in [(old, LobbyEvent.Kind.invitationReceived), (recent, .invitationReceived), (recent, .peerReading)] {
                    try context.db.execute("INSERT INTO event (playerId, at, kind, payload) VALUES (?, ?, ?, '{}')",
                                           bobId, at.unixTime, kind.rawValue)
                }
            }
            try await server.store.pruneEvents()
            let feed = try await client.call(.get, "/v1/events?after=0", token: bob.token)
            let kept = (feed.body["events"] as? [[String: Any]] ?? []).map { $0["kind"] as? String }
            #expect(kept == ["invitationReceived"], "the event of 30 s ago stays; the older one and the stale reading go")
            _ = alice
        }
    }

    @Test(.timeLimit(.minutes(2))) func aWebSocketClientThatFallsBehindLosesNoEvent() async throws {
        // A small buffer, so five of them are a light flood beside the other suites.
        let server = try await TestServer { $0.liveEventBuffer = 64 }
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let bob = try await client.player("bob")
            let bobId = try await server.store.authenticate(token: bob.token)
            let flood = server.store.events.bufferSize * 5
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders[.authorization] = "Bearer \(bob.token)"
            let received = Received()
            let store = server.store
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/events/live?after=0", configuration: configuration, logger: .init(label: "ws")) { inbound, outbound, _ in
                // Five buffers' worth of events committed at once, faster than any client reads.
                try await store.write { context in
                    for n in 0..<flood { try context.record(.peerReading, for: bobId, EventData(player: "p\(n)", rssi: -60, measuredPower: -59)) }
                }
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                while received.all.count < flood, case .text(let text) = try await messages.next() {
                    received.append(text)
                    // A slow reader.
                    if received.all.count % 50 == 0 { try await Task.sleep(for: .milliseconds(20)) }
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
            let players = received.all.compactMap { text -> String? in
                let event = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                return (event?["data"] as? [String: Any])?["player"] as? String
            }
            #expect(players.count == flood, "lost \(flood - players.count) of \(flood) events")
            #expect(players == (0..<flood).map { "p\($0)" }, "in order, none twice")
        }
    }
}
