import Agent
import BeaconFrames
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// The built `nearplay agent` as a user runs it, against a live lobby.
@Suite(.serialized) struct AgentProcessTests {
    @Test(.timeLimit(.minutes(5))) func recognisesAPlayerFromTheRadioAndAnswersTheCLI() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        let tracePath = folder.path + "/bob.jsonl"
        // Bob stays on the air for 5 minutes, longer than the test runs even on a loaded machine:
        // the metrics below count him as tracked, which he is not once his frames end.
        try writeTrace(of: bob.beacon, rssi: -65, from: 3, seconds: 300, path: tracePath)
        let (config, socket) = try prepareAgent(alice, in: folder.path, radio: ["backend": "replay", "file": tracePath])
        let agent = try ChildProcess(try builtExecutable("nearplay"), ["agent", "--config", config], log: folder.path + "/alice.log")
        defer { agent.kill() }
        // (Runs before the kill above.) The agent serves until the SIGTERM at the end: ending
        // before it is a failure, and its log says why.
        let stopping = Flag()
        defer {
            if !stopping.isSet, let status = agent.process.status {
                Issue.record("The agent ended during the test (status \(status)): \(agent.output.suffix(3000))")
            }
        }
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) }, "the agent never opened its socket: \(agent.output)")

        // Bob's frames start 3 s into the replay: the event stream is open by then.
        let nearby = try await blocking {
            var nearby: AgentEvent?
            let deadline = Date().addingTimeInterval(30)
            try AgentClient(path: socket).events(idleTimeout: 30) { line in
                if let event = try? JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)), event.kind == .playerNearby { nearby = event }
                return nearby == nil && Date() < deadline
            }
            return nearby
        }
        let seen = try #require(nearby, "no player_nearby event: \(agent.output)")
        #expect(seen.player == "bob")
        #expect(seen.name == "Bob Tester")
        #expect(seen.beacon == bob.beacon.beaconIdentity?.description)
        let distance = try #require(seen.distance)
        #expect(distance > 0.5 && distance < 10)

        let answer = try await blocking { try AgentClient(path: socket).send(.nearby) }
        let players = try LobbyClient.decoder.decode([NearbyPlayer].self, from: answer)
        #expect(players.map(\.username) == ["bob"])
        #expect(players.first?.unlocked == false)

        // Through the CLI, as a user types it.
        let cli = try ChildProcess(try builtExecutable("nearplay"), ["nearby", "--socket", socket], log: folder.path + "/cli.log")
        await cli.process.wait()
        #expect(cli.process.status == 0)
        #expect(cli.output.contains("bob") && cli.output.contains("Bob Tester"))

        // `nearplay metrics`: the Prometheus text, with what this run did in it.
        let metrics = try ChildProcess(try builtExecutable("nearplay"), ["metrics", "--socket", socket], log: folder.path + "/metrics.log")
        await metrics.process.wait()
        #expect(metrics.process.status == 0)
        func value(_ series: String) -> Double? {
            metrics.output.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #expect((value("nearplay_agent_advertisements_total") ?? 0) > 0, "\(metrics.output)")
        #expect(value("nearplay_agent_tracked_beacons") == 1)
        #expect(value(#"nearplay_agent_resolutions_total{source="lobby"}"#) == 1, "bob resolved once through the lobby")
        #expect(value(#"nearplay_agent_resolutions_total{source="cache"}"#) == 0, "and never again while bob stays")
        #expect(value("nearplay_agent_queue_depth") != nil)
        #expect(metrics.output.contains("# TYPE nearplay_agent_scan_restarts_total counter"))

        // SIGTERM: a clean stop, status 0, the socket removed.
        stopping.set()
        #expect(try await blocking { agent.stop(signal: SIGTERM) } == 0, "\(agent.output)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

/// A flag set once, readable from a `defer`.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
