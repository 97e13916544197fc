import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HummingbirdTesting
import Testing
@testable import LobbyServer

// The attacker suite of issue 21 (ConnectionAttackTests, AccountAttackTests, EventAttackTests,
// NameAttackTests): raw sockets and HTTP against a live lobby on 127.0.0.1, each test reproducing
// one way a hostile client held or misled the lobby, and asserting it no longer can.

extension ConnectionLimits {
    /// Limits of one second, so the suite sees timeouts in seconds; the defaults are ``ConnectionLimits/init()``'s.
    static let quick = ConnectionLimits(
        headTimeout: .seconds(1), bodyTimeout: .seconds(1), idleTimeout: .seconds(1), drainTimeout: .seconds(1),
        maximumConnectionsPerAddress: 4, maximumConnections: 1000, maximumHeadBytes: 4096)

    /// ``quick`` but 30 s for the first head: for tests that send right after connecting, which a
    /// machine busy with other suites may not do within a second.
    static let quickAfterTheHead: ConnectionLimits = {
        var limits = ConnectionLimits.quick
        limits.headTimeout = .seconds(30)
        return limits
    }()
}

/// Runs `body` against a live lobby (a fresh store) held to `limits`, with its port.
func liveLobby(_ limits: ConnectionLimits = .init(), _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    let server = try await TestServer(connections: limits)
    try await server.application.test(.live) { client in
        try await body(try #require(client.port))
    }
}

/// A small HTTP/1.1 client over URLSession for the attacker suite: status, error code and JSON body.
struct HTTPProbe: Sendable {
    let port: Int

    struct Answer {
        var status: Int
        var body: [String: Any]
        var code: String? { (body["error"] as? [String: Any])?["code"] as? String }
    }

    func call(_ method: HTTPRequest.Method, _ path: String, token: String? = nil, authorization: String? = nil, json: String? = nil) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method.rawValue
        // The whole suite runs its tests side by side on two cores: a request may wait a minute
        // for CPU (URLSession's default idle timeout) without anything being wrong.
        request.timeoutInterval = 600
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: body)
    }

    /// Registers `username` (password `password-123`) and signs in; returns the token.
    func player(_ username: String) async throws -> String {
        let registered = try await call(.post, "/v1/players", json: """
            {"username":"\(username)","firstName":"F","lastName":"L","email":"\(username)@example.org","password":"password-123"}
            """)
        #expect(registered.status == 201, "registering \(username): \(registered.body)")
        return try #require(try await signIn(username, "password-123"))
    }

    /// Registers `username` with an e-mail address of its own.
    func register(_ username: String) async throws -> Answer {
        try await call(.post, "/v1/players", json: """
            {"username":"\(username)","firstName":"F","lastName":"L","email":"\(username.lowercased())-\(UUID().uuidString.prefix(6))@example.org","password":"password-123"}
            """)
    }

    /// The token of a sign-in, or nil when it was refused.
    func signIn(_ username: String, _ password: String) async throws -> String? {
        let answer = try await call(.post, "/v1/sessions", json: #"{"username":"\#(username)","password":"\#(password)"}"#)
        return answer.status == 201 ? answer.body["token"] as? String : nil
    }

    /// `observer` reports hearing `username`'s beacon now.
    func see(_ observer: String, _ username: String) async throws {
        let me = try await call(.get, "/v1/players/me", token: try #require(try await signIn(username, "password-123")))
        let beacon = try #require(me.body["beacon"] as? [String: Any])
        let now = Date().formatted(Date.ISO8601FormatStyle())
        let answer = try await call(.post, "/v1/encounters", token: observer, json: """
            {"sightings":[{"uuid":"\(beacon["uuid"] ?? "")","major":\(beacon["major"] ?? 0),"minor":\(beacon["minor"] ?? 0),"distance":1.2,"at":"\(now)"}]}
            """)
        #expect(answer.status == 200, "\(answer.body)")
    }
}
