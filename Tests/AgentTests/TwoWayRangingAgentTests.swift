import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// Two `nearplay agent` processes 3 m apart on the simulated air, with radios whose offsets
/// differ: each reads the other through the lobby's `peerReading` events and ends up ranging
/// two-way, closer to the truth than its one-way reading.
@Suite(.serialized) struct TwoWayRangingAgentTests {
    /// Alice transmits 8 dB strong and hears 8 dB weak, Bob the opposite: Alice reads Bob 16 dB
    /// low (one-way, far too far), Bob reads Alice 16 dB high (far too near); the two directions'
    /// offsets sum to zero, so the two-way mean cancels them. The exponent is ranging's (2.8).
    static let offsets = """
        {"exponent": 2.8, "sigma": 1.0, "loss": 0.0, "seed": 11,
         "devices": {
           "alice": {"waypoints": [[0, 3, 0]], "txOffset": 8, "rxOffset": -8},
           "bob": {"waypoints": [[0, 0, 0]], "txOffset": -8, "rxOffset": 8}
         }}
        """
    static let truth = 3.0

    @Test(.timeLimit(.minutes(5))) func bothAgentsEndUpRangingTwoWayAndCloserToTheTruth() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let airSocket = folder.path + "/air/air.sock"
        var agents: [RunningAgent] = []
        defer { for agent in agents { agent.process.kill() } }
        for name in ["alice", "bob"] {
            let player = try await register(name, at: lobby.url)
            agents.append(try RunningAgent.start(player, in: folder.path, radio: ["backend": "sim", "air_socket": airSocket, "device": name],
                                                 extra: ["encounter_report_seconds": 2]))
        }
        var recorders: [EventRecorder] = []
        for agent in agents {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
            let recorder = try EventRecorder(socket: agent.socket)
            #expect(await recorder.waitUntilSubscribed())
            recorders.append(recorder)
        }
        let scenario = folder.path + "/scenario.json"
        try Self.offsets.write(toFile: scenario, atomically: true, encoding: .utf8)
        let hub = try ChildProcess(try builtExecutable("nearplay"), ["air", "--scenario", scenario, "--socket", airSocket],
                                   log: folder.path + "/air.log")
        defer { hub.kill() }

        for (agent, peer) in [(agents[0], "bob"), (agents[1], "alice")] {
            let twoWay = await eventually(timeout: 60) {
                let nearby = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await agent.send(.nearby))
                return nearby?.first { $0.username == peer }?.ranging == "two-way"
            }
            #expect(twoWay, "\(agent.username) never ranged \(peer) two-way: \(agent.process.output)")
        }
        for (index, peer) in ["bob", "alice"].enumerated() {
            let events = recorders[index].events.filter { $0.player == peer && [.playerNearby, .playerMoved].contains($0.kind) }
            let story = events.map { "\($0.kind.rawValue) \($0.distance ?? -1) \($0.ranging ?? "-")" }
            let oneWay = try #require(events.last { $0.ranging == "one-way" }?.distance, "no one-way event: \(story)")
            let twoWay = try #require(events.last { $0.ranging == "two-way" }, "no two-way event: \(story)")
            let distance = try #require(twoWay.distance)
            // The events carry the interval around the distance.
            let low = try #require(twoWay.distanceLow), high = try #require(twoWay.distanceHigh)
            #expect(low <= distance && distance <= high)
            #expect(abs(distance - Self.truth) < abs(oneWay - Self.truth), "\(agents[index].username): \(story)")
            #expect(abs(distance - Self.truth) < 1.5, "\(agents[index].username): \(story)")
        }
    }
}
