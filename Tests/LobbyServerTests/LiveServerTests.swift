import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import NIOCore
import Testing
@testable import LobbyServer

/// Tier 2: a live server on 127.0.0.1 with an ephemeral port.
@Suite struct LiveServerTests {
    @Test func protectedRoutesRefuseMissingAndBadTokens() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { client in
            let routes: [(HTTPRequest.Method, String)] = [
                (.get, "/v1/players/me"), (.patch, "/v1/players/me"), (.delete, "/v1/players/me"),
                (.put, "/v1/players/me/photo"), (.get, "/v1/players/bob/stats"), (.get, "/v1/players/bob/photo"),
                (.get, "/v1/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/0"), (.post, "/v1/encounters"),
                (.post, "/v1/invitations"), (.get, "/v1/invitations"), (.post, "/v1/invitations/1/accept"),
                (.post, "/v1/invitations/1/decline"), (.get, "/v1/games"), (.get, "/v1/games/1"),
                (.post, "/v1/games/1/rounds/1/scores"), (.get, "/v1/unlocked"), (.post, "/v1/blocks/bob"),
                (.delete, "/v1/blocks/bob"), (.get, "/v1/events"), (.get, "/v1/events/live"), (.delete, "/v1/sessions/current"),
                (.get, "/v1/players/me/calibration"), (.put, "/v1/players/me/calibration"),
            ]
            for (method, uri) in routes {
                for token in [nil, "not-a-real-token"] as [String?] {
                    let answer = try await client.call(method, uri, token: token, json: "{}")
                    #expect(answer.status == .unauthorized, "\(method) \(uri) with token \(token ?? "none")")
                    #expect(errorCode(answer.body) != nil)
                }
            }
        }
    }

    @Test func playersCannotActOnOthersInvitationsGamesOrScores() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { client in
            let alice = try await client.player("alice")
            let bob = try await client.player("bob")
            let mallory = try await client.player("mallory")
            try await client.see(alice.token, (bob.major, bob.minor))
            let invitation = try await client.call(.post, "/v1/invitations", token: alice.token, json: #"{"invitees":["bob"]}"#)
            #expect(invitation.status == .created)
            let id = invitation.body["id"] as? Int ?? -1
            let stolenAccept = try await client.call(.post, "/v1/invitations/\(id)/accept", token: mallory.token)
            #expect(stolenAccept.status == .notFound)
            let inviterAccept = try await client.call(.post, "/v1/invitations/\(id)/accept", token: alice.token)
            #expect(inviterAccept.status == .forbidden)
            let stolenDecline = try await client.call(.post, "/v1/invitations/\(id)/decline", token: mallory.token)
            #expect(stolenDecline.status == .notFound)
            #expect(try await client.call(.post, "/v1/invitations/\(id)/accept", token: bob.token).status == .ok)
            let peek = try await client.call(.get, "/v1/games/\(id)", token: mallory.token)
            #expect(peek.status == .notFound)
            let score = try await client.call(.post, "/v1/games/\(id)/rounds/1/scores", token: mallory.token, json: #"{"score":999,"key":"x","recording":\#(emptyRecordingJSON)}"#)
            #expect(score.status == .notFound)
            let mine = try await client.call(.get, "/v1/games/\(id)", token: bob.token)
            #expect(mine.status == .ok)
            #expect(mine.body["participants"] as? [String] == ["alice", "bob"])
            let stats = try await client.call(.get, "/v1/players/alice/stats", token: mallory.token)
            #expect(stats.status == .forbidden)
        }
    }

    @Test(.timeLimit(.minutes(5))) func webSocketPushesTheBacklogThenLiveEvents() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { client in
            let alice = try await client.player("alice")
            let bob = try await client.player("bob")
            let carol = try await client.player("carol")
            try await client.see(alice.token, (bob.major, bob.minor))
            try await client.see(carol.token, (bob.major, bob.minor))
            #expect(try await client.call(.post, "/v1/invitations", token: alice.token, json: #"{"invitees":["bob"]}"#).status == .created)
            let port = try #require(client.port)
            let received = Received()
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders[.authorization] = "Bearer \(bob.token)"
            let carolToken = carol.token
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/events/live?after=0", configuration: configuration, logger: .init(label: "ws")) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                if case .text(let first) = try await messages.next() { received.append(first) }
                // Now an event that happens while connected.
                _ = try await client.call(.post, "/v1/invitations", token: carolToken, json: #"{"invitees":["bob"]}"#)
                if case .text(let second) = try await messages.next() { received.append(second) }
                try await outbound.close(.normalClosure, reason: nil)
            }
            let events = received.all.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(events.map { $0["kind"] as? String } == ["invitationReceived", "invitationReceived"])
            #expect(events.map { ($0["data"] as? [String: Any])?["player"] as? String } == ["alice", "carol"])
            let feed = try await client.call(.get, "/v1/events?after=0", token: bob.token)
            #expect((feed.body["events"] as? [Any])?.count == 2)
        }
    }
}

final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
