import BeaconKeys
import Foundation
import Hummingbird
import NIOCore
import HummingbirdTesting
import Testing
@testable import Lobby
@testable import LobbyServer

/// Issue 22, as an attacker tries it over HTTP: a location's identity recorded at the location
/// and advertised from elsewhere a period later proves nothing; the refusal says why and
/// `/metrics` counts it.
@Suite struct ReplayAttackTests {
    @Test func aLocationIdentityReplayedInTheNextPeriodIsRefusedAndCounted() async throws {
        let server = try await TestServer {
            $0.rotationPeriod = RotationPeriod(seconds: 2)!
            $0.presenceReportWindow = 1
        }
        try await server.application.test(.router) { client in
            let owner = try await client.player("owner")
            let mallory = try await client.player("mallory")
            let created = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"Hall"}"#)
            let id = try #require(created.body["id"] as? Int)
            let listed = try await client.call(.get, "/v1/locations/\(id)/tournaments", token: mallory.token)
            let tournament = try #require((listed.raw as? [[String: Any]])?.first?["id"] as? Int)
            // What an accomplice heard at the hall: the identity of the period running now.
            let key = try await client.call(.get, "/v1/locations/\(id)/beacon-key", token: owner.token)
            #expect(key.status == .ok)
            let cache = try await client.execute(uri: "/v1/locations/\(id)/beacon-key", method: .get,
                                                 headers: [.authorization: "Bearer \(owner.token)"]) { $0.headers[.cacheControl] }
            #expect(cache == "no-store", "a key is never kept by a cache")
            let secret = try #require(BeaconSecret(base64URL: key.body["secret"] as? String ?? ""))
            let uuid = try #require(key.body["locationUuid"] as? String)
            let heardAt = Date()
            let (major, minor) = RotatingIdentity.location(secret, period: RotationPeriod(seconds: 2)!.index(at: heardAt))
            // Played back from home once that period and the second after it are over.
            let wait = RotationPeriod(seconds: 2)!.end(of: RotationPeriod(seconds: 2)!.index(at: heardAt)).timeIntervalSinceNow + 1.2
            try await Task.sleep(for: .seconds(wait))
            #expect(try await client.call(.put, "/v1/locations/\(id)/on-air", token: owner.token).status == .noContent)
            let now = Date().formatted(Date.ISO8601FormatStyle())
            let report = try await client.call(.post, "/v1/encounters", token: mallory.token, json: """
                {"sightings":[{"uuid":"\(uuid)","major":\(major),"minor":\(minor),"distance":1,"at":"\(now)"}]}
                """)
            #expect(report.status == .ok && report.body["recorded"] as? Int == 0, "\(report.body)")
            let refused = (report.body["refused"] as? [[String: Any]])?.first
            #expect(refused?["index"] as? Int == 0 && refused?["reason"] as? String == "expiredIdentity", "\(report.body)")
            let join = try await client.call(.post, "/v1/tournaments/\(tournament)/entries", token: mallory.token)
            #expect(join.status == .forbidden && errorCode(join.body) == "notNearLocation", "\(join.body)")
            let resolve = try await client.call(.get, "/v1/locations/beacons/\(uuid)/\(major)/\(minor)", token: mallory.token)
            #expect(resolve.status == .notFound, "\(resolve.body)")
            let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(text.contains(#"nearplay_lobby_presence_refused_total{reason="expiredIdentity"} 1"#), "\(text)")
        }
    }
}
