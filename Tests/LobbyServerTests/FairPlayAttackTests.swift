import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import LobbyServer

/// Issue 21, fair play and the smaller points, tried over HTTP against a live lobby as the
/// attacker did: walking the identity space, reporting players never met, filling a victim's
/// invitation slots, reading faces of strangers, probing e-mail addresses, opening the event
/// stream without a token.
@Suite struct FairPlayAttackTests {
    private static let deployment = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// A live lobby whose accounts are new (the default rules: issue 21's TestServer otherwise
    /// treats every account as established).
    private func liveLobbyWithNewAccounts(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let server = try await TestServer { $0.newAccountAge = 7 * 86400 }
        try await server.application.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test func walkingTheIdentitySpaceFindsNobodyAndIsCutOff() async throws {
        try await liveLobby { port in
            let probe = HTTPProbe(port: port)
            let mallory = try await probe.player("mallory")
            for name in ["alice", "bob", "carol"] { _ = try await probe.player(name) }
            // Before issue 21 the first players were 1/0, 1/1, 1/2: the walk found all three.
            var found = 0, throttled: HTTPProbe.Answer?
            for minor in 0..<120 {
                let answer = try await probe.call(.get, "/v1/beacons/\(Self.deployment)/1/\(minor)", token: mallory)
                if answer.status == 200 { found += 1 }
                if answer.status == 429 { throttled = answer; break }
                #expect(answer.status == 404, "\(answer.body)")
            }
            #expect(found == 0)
            let cut = try #require(throttled, "100 unknown identities an hour, then 429")
            #expect(cut.code == "tooManyUnknownIdentities")
        }
    }

    @Test func madeUpEncountersRecordNothingAndOpenNothing() async throws {
        try await liveLobby { port in
            let probe = HTTPProbe(port: port)
            let mallory = try await probe.player("mallory")
            _ = try await probe.player("victim")
            let now = Date().formatted(Date.ISO8601FormatStyle())
            // The whole first thousand of the old sequence in one report.
            let sightings = (0..<1000).map { #"{"uuid":"\#(Self.deployment)","major":\#(1 + $0 / 65536),"minor":\#($0 % 65536),"distance":1,"at":"\#(now)"}"# }
            let report = try await probe.call(.post, "/v1/encounters", token: mallory, json: #"{"sightings":[\#(sightings.joined(separator: ","))]}"#)
            #expect(report.status == 200 && report.body["recorded"] as? Int == 0 && report.body["ignored"] as? Int == 1000, "\(report.body)")
            #expect(try await probe.call(.get, "/v1/players/victim/stats", token: mallory).status == 403)
            let invite = try await probe.call(.post, "/v1/invitations", token: mallory, json: #"{"invitees":["victim"]}"#)
            #expect(invite.status == 409 && invite.code == "nobodyInvitable", "\(invite.body)")
        }
    }

    @Test func encounterReportsAreRateLimited() async throws {
        try await liveLobby { port in
            let probe = HTTPProbe(port: port)
            let mallory = try await probe.player("mallory")
            // 60 at once, then one a second: 150 as fast as they go are mostly refused.
            var statuses: [Int] = []
            let started = ContinuousClock.now
            for _ in 0..<150 { statuses.append(try await probe.call(.post, "/v1/encounters", token: mallory, json: #"{"sightings":[]}"#).status) }
            let seconds = Int((ContinuousClock.now - started).components.seconds) + 1
            #expect(statuses.prefix(60).allSatisfy { $0 == 200 })
            #expect(statuses.filter { $0 == 200 }.count <= 60 + seconds, "\(seconds) s")
            #expect(Set(statuses) == [200, 429])
        }
    }

    @Test func newAccountsCannotInviteFromAfar() async throws {
        try await liveLobbyWithNewAccounts { port in
            let probe = HTTPProbe(port: port)
            let victim = try await probe.player("victim")
            let beacon = try #require(try await probe.call(.get, "/v1/players/me", token: victim).body["beacon"] as? [String: Any])
            // Ten throw-away accounts that heard the victim's identity (the strongest remote
            // attacker: the identity was overheard once) report it; the victim's agent never
            // heard any of them.
            for i in 0..<10 {
                let sybil = try await probe.player("sybil\(i)")
                let now = Date().formatted(Date.ISO8601FormatStyle())
                let report = try await probe.call(.post, "/v1/encounters", token: sybil, json: """
                    {"sightings":[{"uuid":"\(Self.deployment)","major":\(beacon["major"] ?? 0),"minor":\(beacon["minor"] ?? 0),"distance":1,"at":"\(now)"}]}
                    """)
                #expect(report.body["recorded"] as? Int == 1, "\(report.body)")
                let invite = try await probe.call(.post, "/v1/invitations", token: sybil, json: #"{"invitees":["victim"]}"#)
                #expect(invite.status == 409 && invite.code == "nobodyInvitable", "\(invite.body)")
            }
            let pending = try await probe.call(.get, "/v1/invitations", token: victim)
            #expect(pending.status == 200)
        }
    }

    @Test func onlyALocationsOwnerSaysItIsOnTheAir() async throws {
        try await liveLobby { port in
            let probe = HTTPProbe(port: port)
            let owner = try await probe.player("owner")
            let mallory = try await probe.player("mallory")
            let location = try #require(try await probe.call(.post, "/v1/locations", token: owner, json: #"{"name":"Hall"}"#).body["id"] as? Int)
            let stranger = try await probe.call(.put, "/v1/locations/\(location)/on-air", token: mallory)
            #expect(stranger.status == 404 && stranger.code == "locationNotFound")
            #expect(try await probe.call(.put, "/v1/locations/\(location)/on-air", token: owner).status == 204)
        }
    }

    @Test func aFaceIsShownOnlyToPlayersWhoMetItsOwner() async throws {
        // The test client connects first and speaks after the probe's registrations, which on a
        // loaded machine take longer than the 10 s a connection normally has to send its first
        // request (the server then closes it, as it should).
        let server = try await TestServer(connections: ConnectionLimits(headTimeout: .seconds(300)))
        try await server.application.test(.live) { client in
            let probe = HTTPProbe(port: try #require(client.port))
            let alice = try await probe.player("alice")
            let mallory = try await probe.player("mallory")
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
            let uploaded = try await client.call(.put, "/v1/players/me/photo", token: alice, bytes: png)
            #expect(uploaded.status == .ok)
            let stranger = try await probe.call(.get, "/v1/players/alice/photo", token: mallory)
            #expect(stranger.status == 404 && stranger.code == "photoNotFound")
            try await probe.see(mallory, "alice")
            #expect(try await probe.call(.get, "/v1/players/alice/photo", token: mallory).status == 200)
        }
    }

    @Test func aTakenEmailAddressIsNotRevealed() async throws {
        try await liveLobby { port in
            let probe = HTTPProbe(port: port)
            let first = try await probe.call(.post, "/v1/players", json: """
                {"username":"first","firstName":"F","lastName":"L","email":"shared@example.org","password":"password-123"}
                """)
            let second = try await probe.call(.post, "/v1/players", json: """
                {"username":"second","firstName":"F","lastName":"L","email":"Shared@Example.org","password":"password-123"}
                """)
            #expect(first.status == 201 && second.status == 201, "\(second.body)")
        }
    }

    @Test func theEventStreamWithoutATokenIsRefusedWith401() async throws {
        try await liveLobby { port in
            let connection = try await RawConnection(port: port)
            try await connection.send("""
                GET /v1/events/live HTTP/1.1\r\nHost: lobby\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n
                """)
            let answer = try #require(await connection.closed(within: .seconds(10)), "the lobby kept the connection")
            #expect(answer.httpStatus == 401, "\(answer.prefix(200))")
            #expect(answer.contains("missingToken"), "\(answer.prefix(400))")
        }
    }
}
