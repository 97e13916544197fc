import Foundation
import Glibc
import LobbyClient
import Testing
@testable import LobbyServer

/// The live push's first frames follow the upgrade at once: under load they share a read with
/// the 101 response. Every connection that opens must get the backlog from its first frame, and
/// one whose handshake stalls must end with `liveEventsTimedOut` rather than stay silent, so
/// that a reconnect gets it. (In the whole suite some handshakes did stall: the fake HCI
/// controller shut down a descriptor number it had closed, which by then was a WebSocket's.)
@Suite struct LiveBacklogTests {
    @Test(.timeLimit(.minutes(5))) func everyConnectionGetsTheBacklogFromItsFirstFrame() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            var clients: [LobbyClient] = []
            for name in ["alice", "bob"] {
                _ = try await base.register(username: name, firstName: "F", lastName: "L", email: "\(name)@example.org", password: "password-123")
                clients.append(base.authenticated(try await base.logIn(username: name, password: "password-123").token))
            }
            let bob = try await bob(clients)
            _ = try await clients[0].reportEncounters([EncounterSighting(uuid: bob.uuid, major: bob.major, minor: bob.minor, distance: 1, at: Date())])
            _ = try await clients[0].invite(["bob"])
            let connections = Int(ProcessInfo.processInfo.environment["NEARPLAY_LIVE_BACKLOG_CONNECTIONS"] ?? "") ?? 40
            var missed: [String] = []
            for _ in 0..<connections {
                // A socket that does not open ends its stream (liveEventsTimedOut) instead of
                // staying silent; the agent then connects again, and so does this loop.
                var outcome: String? = "never opened in 3 attempts"
                attempts: for _ in 0..<3 {
                    do {
                        for try await event in clients[1].liveEvents(after: 0, openTimeout: .seconds(10)) {
                            outcome = event.kind == "invitationReceived" ? nil : "first event \(event.kind)"
                            break attempts
                        }
                        outcome = "the stream ended without an event"
                        break attempts
                    } catch let error as LobbyClientError where error.code == "liveEventsTimedOut" {
                        continue attempts
                    } catch {
                        outcome = "the stream failed: \(error)"
                        break attempts
                    }
                }
                if let outcome { missed.append(outcome) }
            }
            #expect(missed.isEmpty, "\(missed.count) of \(connections) connections missed the first backlog frame: \(missed)")
        }
    }

    /// A lobby that takes the connection and never answers the upgrade: the stream ends with
    /// liveEventsTimedOut after its open timeout instead of staying silent.
    @Test func aHandshakeThatNeverCompletesEndsTheStream() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 4) == 0)
        // The kernel completes the TCP handshake; nobody ever reads the upgrade request.
        let client = LobbyClient(baseURL: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))").authenticated("token")
        let error = await #expect(throws: LobbyClientError.self) {
            for try await _ in client.liveEvents(after: 0, openTimeout: .milliseconds(500)) {}
        }
        #expect(error?.code == "liveEventsTimedOut")
    }

    private func bob(_ clients: [LobbyClient]) async throws -> PlayerBeacon {
        try await clients[1].me().beacon
    }
}
