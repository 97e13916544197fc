import BusTestSupport
import Foundation
import Testing
@testable import LobbyServer

/// Issue 23: lobby instances behind the nginx site the repository ships (nginx/nearplay-lobby.conf),
/// run by a real nginx. (Several instances sharing one database come with the PostgreSQL store;
/// here each instance has its own SQLite file, which is enough for what a proxy does.)
@Suite(.serialized) struct ProxyTests {
    /// One request through a new connection from `source`; the whole answer once the lobby or
    /// nginx closes the connection.
    static func request(_ port: Int, from source: String = "127.0.0.1", _ method: String, _ path: String,
                        headers: [String] = [], body: String? = nil) async throws -> String {
        let connection = try await RawConnection(port: port, from: source)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: lobby\r\nConnection: close\r\n"
        for header in headers { head += header + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        try await connection.send(head + "\r\n" + (body ?? ""))
        return try #require(await connection.closed(within: .seconds(30)), "no complete answer to \(method) \(path)")
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// One lobby started with `--trusted-proxy 127.0.0.1` behind nginx, for `body`; both stop after.
    static func withOneLobbyBehindNginx(_ body: (PrivateNginx) async throws -> Void) async throws {
        let folder = try Self.folder()
        let lobby = try await ServerProcess(database: folder.appendingPathComponent("a.sqlite").path, folder: folder,
                                            arguments: ["--trusted-proxy", "127.0.0.1"])
        do {
            let nginx = try await PrivateNginx(upstreams: [lobby.port])
            defer { nginx.stop() }
            try await body(nginx)
        } catch {
            await lobby.stop(signal: SIGTERM)
            throw error
        }
        await lobby.stop(signal: SIGTERM)
    }

    @Test func requestsReachEveryInstanceAndTheSurvivorWhenOneIsKilled() async throws {
        let folder = try Self.folder()
        let first = try await ServerProcess(database: folder.appendingPathComponent("a.sqlite").path, folder: folder)
        let second = try await ServerProcess(database: folder.appendingPathComponent("b.sqlite").path, folder: folder)
        let nginx = try await PrivateNginx(upstreams: [first.port, second.port])
        defer { nginx.stop() }
        for _ in 0..<20 {
            let answer = try await Self.request(nginx.port, "GET", "/v1/health")
            #expect(answer.httpStatus == 200, "\(answer.prefix(300))")
        }
        // Both served some: each counts the health requests it answered.
        for server in [first, second] {
            let metrics = try await Self.request(server.port, "GET", "/metrics")
            #expect(metrics.contains("route=\"/v1/health\""), "an instance got no request through nginx")
        }

        await first.stop(signal: SIGKILL)
        for _ in 0..<20 {
            let answer = try await Self.request(nginx.port, "GET", "/v1/health")
            #expect(answer.httpStatus == 200, "after one instance died: \(answer.prefix(300))")
        }
        // A write that never reached the dead instance (connection refused) goes to the survivor.
        let registration = #"{"username":"survivor","firstName":"Sam","lastName":"Vivor","email":"sam@example.org","password":"correct horse battery"}"#
        for _ in 0..<2 {
            let answer = try await Self.request(nginx.port, "POST", "/v1/players", body: registration)
            if answer.httpStatus == 201 { break }
            Issue.record("registration through nginx: \(answer.prefix(300))")
        }
        await second.stop(signal: SIGTERM)
    }

    /// Behind nginx every connection comes from nginx: with `--trusted-proxy` the lobby throttles
    /// the client nginx names, and a client cannot name someone else.
    @Test func signInThrottlingCountsTheClientNginxForwards() async throws {
        try await Self.withOneLobbyBehindNginx { nginx in
            func signIn(from source: String, as username: String, forwardedFor: String? = nil) async throws -> Int? {
                let body = #"{"username":"\#(username)","password":"not the password"}"#
                return try await Self.request(nginx.port, from: source, "POST", "/v1/sessions",
                                              headers: forwardedFor.map { ["X-Forwarded-For: \($0)"] } ?? [], body: body).httpStatus
            }
            // A guesser at 127.0.0.2 trying many accounts runs into its address's limit (30 at once).
            // The address earns an attempt back every 6 s, and 30 wrong passwords take seconds on a
            // busy machine: allow one more answered attempt per 6 s the run took.
            var statuses: [Int?] = []
            let started = ContinuousClock.now
            for attempt in 0..<40 { statuses.append(try await signIn(from: "127.0.0.2", as: "guess\(attempt)")) }
            let earnedBack = Int((ContinuousClock.now - started) / .seconds(6)) + 1
            #expect(statuses.prefix(30).allSatisfy { $0 == 401 }, "\(statuses)")
            #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 }, "\(statuses)")
            let refused = statuses.filter { $0 == 429 }.count
            #expect(refused >= 1 && refused >= 10 - earnedBack, "\(refused) of the last 10 refused, \(earnedBack) earned back: \(statuses)")
            #expect(statuses.last == 429 || statuses.dropLast().last == 429, "\(statuses)")
            // Claiming to be someone else does not help: nginx appends the real address.
            #expect(try await signIn(from: "127.0.0.2", as: "another", forwardedFor: "10.1.2.3") == 429)
            // Another client behind the same nginx is not held back by the guesser.
            #expect(try await signIn(from: "127.0.0.3", as: "someone") == 401)
        }
    }

    @Test func theLiveFeedUpgradesThroughNginx() async throws {
        try await Self.withOneLobbyBehindNginx { nginx in
            let registration = #"{"username":"viewer","firstName":"Vi","lastName":"Ewer","email":"vi@example.org","password":"correct horse battery"}"#
            #expect(try await Self.request(nginx.port, "POST", "/v1/players", body: registration).httpStatus == 201)
            let session = try await Self.request(nginx.port, "POST", "/v1/sessions", body: #"{"username":"viewer","password":"correct horse battery"}"#)
            let token = try #require(session.range(of: #""token":""#).map { session[$0.upperBound...].prefix { $0 != "\"" } })

            let upgrade = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
            // Without a token the lobby itself answers (nginx passed the upgrade on).
            let anonymous = try await RawConnection(port: nginx.port)
            try await anonymous.send((["GET /v1/events/live HTTP/1.1", "Host: lobby"] + upgrade).joined(separator: "\r\n") + "\r\n\r\n")
            let waitUntil = ContinuousClock.now + .seconds(30)
            while !anonymous.received.contains("}}"), ContinuousClock.now < waitUntil { try await Task.sleep(for: .milliseconds(20)) }
            let refused = anonymous.received
            #expect(refused.httpStatus == 401 && refused.contains("missingToken"), "\(refused.prefix(300))")

            let connection = try await RawConnection(port: nginx.port)
            let head = (["GET /v1/events/live?after=0 HTTP/1.1", "Host: lobby", "Authorization: Bearer \(token)"] + upgrade).joined(separator: "\r\n")
            try await connection.send(head + "\r\n\r\n")
            let deadline = ContinuousClock.now + .seconds(10)
            while !connection.received.contains("\r\n\r\n"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(connection.received.hasPrefix("HTTP/1.1 101"), "\(connection.received.prefix(300))")
        }
    }

    @Test func theClientIsTheLastAddressNoTrustedProxyAdded() {
        let trusted: Set = ["127.0.0.1", "10.0.0.5"]
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["203.0.113.7"], trustedProxies: trusted) == "203.0.113.7")
        // What the client wrote comes first; nginx appended the real address last.
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["198.51.100.1, 203.0.113.7"], trustedProxies: trusted) == "203.0.113.7")
        // Two proxies in a row: the first address neither of them is.
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["203.0.113.7, 10.0.0.5"], trustedProxies: trusted) == "203.0.113.7")
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["203.0.113.7", "10.0.0.5"], trustedProxies: trusted) == "203.0.113.7")
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["2001:db8::1"], trustedProxies: trusted) == "2001:db8::1")
        // Not an address, or nothing at all: the proxy's own address counts.
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["unknown"], trustedProxies: trusted) == nil)
        #expect(ForwardedClientMiddleware.client(forwardedFor: [], trustedProxies: trusted) == nil)
        #expect(ForwardedClientMiddleware.client(forwardedFor: ["10.0.0.5"], trustedProxies: trusted) == nil)
    }

    @Test func aTrustedProxyMustBeAnAddress() async throws {
        let folder = try Self.folder()
        let serve = try SpawnedProcess(try ServerProcess.executable().path, [
            "lobby", "serve", "--db", folder.appendingPathComponent("a.sqlite").path, "--port", "0", "--trusted-proxy", "nginx.local",
        ])
        let result = await serve.finish()
        #expect(result.status == 64)
        #expect(result.stderr.contains("--trusted-proxy takes an IP address") && result.stderr.contains("nginx.local"), "\(result.stderr)")
    }
}
