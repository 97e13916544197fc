import Foundation
import BusTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import Lobby
@testable import LobbyServer

/// Issue 21, availability 1 and 2: idle, slow and malformed connections are cut and answered,
/// one address holds only its share, and SIGTERM ends the lobby within its drain deadline.
@Suite struct ConnectionAttackTests {
    // MARK: Availability 1: connections time out, garbage is answered and closed

    @Test func aConnectionThatSendsNothingIsAnswered408AndClosed() async throws {
        try await liveLobby(.quick) { port in
            let connection = try await RawConnection(port: port)
            let answer = try #require(await connection.closed(within: .seconds(10)), "the lobby still holds an idle connection")
            #expect(answer.httpStatus == 408)
            #expect(answer.contains("requestTimeout"))
        }
    }

    @Test func aHeadSentOneByteAtATimeIsCutAtTheHeadTimeout() async throws {
        try await liveLobby(.quick) { port in
            let connection = try await RawConnection(port: port)
            let started = ContinuousClock.now
            await connection.trickle("GET /v1/health HTTP/1.1\r\nHost: lobby\r\nX-Slow: " + String(repeating: "a", count: 200) + "\r\n\r\n",
                                     every: .milliseconds(100))
            let answer = try #require(await connection.closed(within: .seconds(10)))
            #expect(answer.httpStatus == 408)
            #expect(ContinuousClock.now - started < .seconds(12), "cut after about the head timeout, not when the client gave up (24 s)")
        }
    }

    @Test(arguments: [
        "FOO / HTTP/1.1\r\nHost: lobby\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: lobby\r\nNo colon here\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHo st: lobby\r\n\r\n",
        "\u{01}\u{02}\u{03} garbage\r\n\r\n",
    ])
    func anUnparseableRequestIsAnswered400AndClosed(request: String) async throws {
        try await liveLobby(.quickAfterTheHead) { port in
            let connection = try await RawConnection(port: port)
            try await connection.send(request)
            let answer = try #require(await connection.closed(within: .seconds(10)), "left open: \(request.debugDescription)")
            #expect(answer.httpStatus == 400, "\(request.debugDescription) got \(answer.prefix(60).debugDescription)")
            #expect(answer.contains("malformedRequest"))
        }
    }

    @Test func aHeadOverTheLimitIsAnswered431AndClosed() async throws {
        try await liveLobby(.quickAfterTheHead) { port in
            let connection = try await RawConnection(port: port)
            try await connection.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\nX-Big: " + String(repeating: "b", count: 80 * 1024 + 10) + "\r\n\r\n")
            let answer = try #require(await connection.closed(within: .seconds(10)))
            #expect(answer.httpStatus == 431)
        }
    }

    @Test func aBodyTrickledAfterItsHeadIsCutAtTheBodyTimeout() async throws {
        try await liveLobby(.quickAfterTheHead) { port in
            let connection = try await RawConnection(port: port)
            try await connection.send("POST /v1/sessions HTTP/1.1\r\nHost: lobby\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n")
            let trickling = Task { await connection.trickle(String(repeating: " ", count: 200), every: .milliseconds(100)) }
            defer { trickling.cancel() }
            let answer = try #require(await connection.closed(within: .seconds(10)), "a trickled body holds the connection")
            #expect(answer.httpStatus == 408)
        }
    }

    @Test func aKeptAliveConnectionIsClosedWhenIdleBetweenRequests() async throws {
        try await liveLobby(.quickAfterTheHead) { port in
            let connection = try await RawConnection(port: port)
            try await connection.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\n\r\n")
            let answer = try #require(await connection.closed(within: .seconds(10)), "an idle kept-alive connection stays open")
            #expect(answer.httpStatus == 200, "the request itself was answered first")
            // A second request started after the answer, never finished.
            let slow = try await RawConnection(port: port)
            try await slow.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\n\r\nGET /v1/health HTTP/1.1\r\nHo")
            #expect(await slow.closed(within: .seconds(10)) != nil, "a half-sent second head holds the connection")
        }
    }

    @Test func oneAddressHoldsOnlyItsShareOfConnectionsAndOthersAreServed() async throws {
        // Timeouts long enough that none of the held connections is cut while the test runs.
        var limits = ConnectionLimits.quick
        limits.headTimeout = .seconds(60)
        try await liveLobby(limits) { port in
            var held: [RawConnection] = []
            for _ in 0..<4 { held.append(try await RawConnection(port: port)) }
            let refused = try await RawConnection(port: port)
            let answer = try #require(await refused.closed(within: .seconds(10)), "a fifth connection from one address is held")
            #expect(answer.httpStatus == 429)
            #expect(answer.contains("tooManyConnections"))
            // Another client address is served meanwhile.
            let other = try await RawConnection(port: port, from: "127.0.0.2")
            try await other.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\nConnection: close\r\n\r\n")
            #expect(await other.closed(within: .seconds(10))?.httpStatus == 200)
            // Once one closes, the address may connect again.
            await held.removeFirst().close()
            try await Task.sleep(for: .milliseconds(100))
            let again = try await RawConnection(port: port)
            try await again.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\nConnection: close\r\n\r\n")
            #expect(await again.closed(within: .seconds(10))?.httpStatus == 200)
            for connection in held { await connection.close() }
        }
    }

    @Test func aRequestWhoseBodyArrivesInTimeIsAnsweredAndKeptAlive() async throws {
        var limits = ConnectionLimits.quickAfterTheHead
        // A body 300 ms behind its head, against a timeout with room for a machine that stalls
        // (3 s was not: the whole suite on two cores once held the sender past it).
        limits.bodyTimeout = .seconds(10)
        limits.idleTimeout = .seconds(60)
        try await liveLobby(limits) { port in
            let connection = try await RawConnection(port: port)
            try await connection.send("POST /v1/sessions HTTP/1.1\r\nHost: lobby\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n")
            try await Task.sleep(for: .milliseconds(300))
            try await connection.send("{}")
            let deadline = ContinuousClock.now + .seconds(10)
            while connection.received.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(connection.received.httpStatus == 400, "missing fields, answered by the API itself: \(connection.received.prefix(80))")
            #expect(connection.isOpen, "kept alive until the idle timeout")
        }
    }

    /// Both units, the single one on SQLite and the template of several on PostgreSQL; an instance
    /// of the template also holds its PostgreSQL connections: at most `--pool-size` 200, plus 3
    /// LISTEN and 2 lease connections.
    @Test func theLobbyUnitAllowsTheDescriptorsItsConnectionsNeed() throws {
        let defaults = ConnectionLimits()
        let units = ["nearplay-lobby.service": 0, "nearplay-lobby@.service": 200 + 5]
        for (unit, databaseConnections) in units {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(unit)"), encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("LimitNOFILE=") }, "\(unit) sets no descriptor limit")
            let limit = try #require(Int(line.dropFirst("LimitNOFILE=".count)), "\(unit): \(line)")
            #expect(limit >= defaults.maximumConnections + ConnectionLimits.reservedDescriptors + databaseConnections, "\(unit)")
            #expect(defaults.fitting(descriptorLimit: limit) == defaults, "\(unit)'s limit holds every connection the lobby allows")
        }
        #expect(defaults.fitting(descriptorLimit: 1024).maximumConnections == 1024 - ConnectionLimits.reservedDescriptors)
    }

    // MARK: Availability 2: SIGTERM drains with a deadline

    @Test(.timeLimit(.minutes(1))) func sigtermEndsTheLobbyWithinFiveSecondsWhileClientsHoldConnections() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-sigterm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess(database: folder.appendingPathComponent("lobby.sqlite").path, folder: folder)
        let idle = try await RawConnection(port: server.port)
        let halfHead = try await RawConnection(port: server.port)
        try await halfHead.send("GET /v1/health HTTP/1.1\r\nHo")
        let halfBody = try await RawConnection(port: server.port)
        try await halfBody.send("POST /v1/sessions HTTP/1.1\r\nHost: lobby\r\nContent-Length: 100\r\n\r\n{")
        let keptAlive = try await RawConnection(port: server.port)
        try await keptAlive.send("GET /v1/health HTTP/1.1\r\nHost: lobby\r\n\r\n")
        try await Task.sleep(for: .milliseconds(200))

        let started = ContinuousClock.now
        let status = await server.stop(signal: SIGTERM)
        let took = ContinuousClock.now - started
        #expect(status == 0)
        #expect(took <= .seconds(5), "SIGTERM to exit took \(took)")
        for connection in [idle, halfHead, halfBody, keptAlive] { #expect(await connection.closed(within: .seconds(1)) != nil) }
    }
}
