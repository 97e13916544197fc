import Foundation
import LobbyClient
import Testing
@testable import LobbyServer

/// The live push's first frames follow the upgrade at once: under load they share a read with
/// the 101 response. Every connection must still get the backlog, first frame included.
@Suite struct LiveBacklogTests {
    @Test(.timeLimit(.minutes(5))) func everyConnectionGetsTheBacklogFromItsFirstFrame() async throws {
        let server = try TestServer()
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
                let stream = clients[1].liveEvents(after: 0)
                // The first event, or after 20 s what the server side looked like then.
                let outcome = await withTaskGroup(of: String?.self) { group in
                    group.addTask {
                        do {
                            for try await event in stream { return event.kind == "invitationReceived" ? nil : "first event \(event.kind)" }
                            return "the stream ended"
                        } catch {
                            return "the stream failed: \(error)"
                        }
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(20))
                        return "nothing in 20 s with \(server.store.events.subscriberCount) live subscriber(s) at the lobby"
                    }
                    let first = await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                if let outcome { missed.append(outcome) }
            }
            #expect(missed.isEmpty, "\(missed.count) of \(connections) connections missed the first backlog frame: \(missed)")
        }
    }

    private func bob(_ clients: [LobbyClient]) async throws -> PlayerBeacon {
        try await clients[1].me().beacon
    }
}
