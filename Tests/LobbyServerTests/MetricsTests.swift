import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import LobbyServer

/// `GET /metrics`: the Prometheus text format, counting what the requests before it did.
@Suite struct LobbyMetricsTests {
    /// The value of one series in a text exposition, if present.
    static func value(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func countsRequestsByRouteTimesTheDatabaseAndNeedsNoToken() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            for id in [1, 2, 3] {
                #expect(try await client.call(.get, "/v1/games/\(id)", token: alice.token).status == .notFound)
            }
            #expect(try await client.call(.get, "/v1/nowhere").status == .notFound)
            let (status, contentType, text) = try await client.execute(uri: "/metrics", method: .get) {
                ($0.status, $0.headers[.contentType], String(buffer: $0.body))
            }
            #expect(status == .ok)
            #expect(contentType?.hasPrefix("text/plain; version=0.0.4") == true)
            // By route pattern, not by id: three requests, one series.
            #expect(Self.value(#"nearplay_lobby_requests_total{route="/v1/games/{id}",method="GET",status="404"}"#, in: text) == 3, "\(text)")
            #expect(Self.value(#"nearplay_lobby_requests_total{route="/v1/players",method="POST",status="201"}"#, in: text) == 1)
            #expect(Self.value(#"nearplay_lobby_requests_total{route="unmatched",method="GET",status="404"}"#, in: text) == 1, "\(text.split(separator: "\n").filter { $0.contains("404") })")
            #expect(Self.value(#"nearplay_lobby_request_duration_seconds_count{route="/v1/sessions",method="POST"}"#, in: text) == 1)
            #expect((Self.value(#"nearplay_lobby_database_seconds_count{access="write"}"#, in: text) ?? 0) >= 2, "registration and sign-in wrote")
            #expect((Self.value(#"nearplay_lobby_database_seconds_count{access="read"}"#, in: text) ?? 0) >= 3)
            #expect(Self.value("nearplay_lobby_websocket_clients", in: text) == 0)
            #expect(text.contains("# TYPE nearplay_lobby_request_duration_seconds histogram"))
        }
    }
}
