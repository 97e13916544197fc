import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// Calibration from the crowd, end to end: four `nearplay agent` processes at the corners of a
/// 3 m square on the simulated air, with radios that transmit and hear up to 6 dB off, report
/// their readings of each other; the lobby solves every device's offsets from the exchanges and
/// publishes them; a fifth agent in the middle, which does not advertise (so it only ever ranges
/// one-way), corrects its readings with the players' published offsets and comes within reach
/// of the true 2.1 m, where its uncorrected readings were far off.
@Suite(.serialized) struct CrowdCalibrationAgentTests {
    /// Each corner's transmit and receive offsets sum to 0 (a device whose advertised power was
    /// measured with its own receiver): the exchanges pin every device's t − g, which is all a
    /// reading's bias depends on here, whatever the distances.
    static let corners: [(name: String, x: Double, y: Double, transmit: Double, receive: Double)] = [
        ("alice", 0, 0, 6, -6), ("bob", 3, 0, -6, 6), ("carol", 3, 3, 4, -4), ("dave", 0, 3, -4, 4),
    ]
    static let truth = (1.5 * 1.5 * 2).squareRoot()

    static var scenario: String {
        stillAirScenario(exponent: 2.8, seed: 7, corners.map { StillDevice(name: $0.name, x: $0.x, y: $0.y, transmit: $0.transmit, receive: $0.receive) }
            + [StillDevice(name: "eve", x: 1.5, y: 1.5)])
    }

    @Test(.timeLimit(.minutes(5))) func aPlayerInTheMiddleRangesCloserOnceTheLobbySolvedTheOthersOffsets() async throws {
        let folder = try TemporaryFolder()
        // Identities rotate every 6 s: eve resolves each new one, and the answer carries the
        // player's offsets as the lobby holds them then (in use, every 15 minutes).
        let lobby = try await blocking {
            try LobbyProcess(folder: folder.path, extraArguments: ["--crowd-calibration-interval", "2", "--crowd-exchange-spacing", "1",
                                                                   "--rotation-period", "6"])
        }
        defer { lobby.kill() }
        let airSocket = folder.path + "/air/air.sock"
        var agents: [RunningAgent] = []
        defer { for agent in agents { agent.process.kill() } }
        var players: [String: TestPlayer] = [:]
        for name in Self.corners.map(\.name) + ["eve"] {
            let player = try await register(name, at: lobby.url)
            players[name] = player
            var extra: [String: Any] = ["encounter_report_seconds": 2]
            if name == "eve" { extra["advertise"] = false }
            agents.append(try RunningAgent.start(player, in: folder.path, radio: ["backend": "sim", "air_socket": airSocket, "device": name],
                                                 extra: extra))
        }
        let eve = try #require(agents.last)
        for agent in agents {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
        }
        let recorder = try EventRecorder(socket: eve.socket)
        #expect(await recorder.waitUntilSubscribed())
        let scenario = folder.path + "/scenario.json"
        try Self.scenario.write(toFile: scenario, atomically: true, encoding: .utf8)
        let hub = try ChildProcess(try builtExecutable("nearplay"), ["air", "--scenario", scenario, "--socket", airSocket],
                                   log: folder.path + "/air.log")
        defer { hub.kill() }

        // The lobby publishes every corner's offsets once each has exchanged readings with the
        // other three. The first exchanges carry the filters' starting variance (32 dB²), which
        // leaves the offsets shrunk towards the prior's 0 by a tenth or so; 20 s of exchanges
        // (one a second per pair) pin them.
        let started = Date()
        var solved: [String: LobbyRadioOffsets] = [:]
        let published = await eventually(timeout: 90) {
            for corner in Self.corners {
                if let offsets = try? await players[corner.name]?.client.radioOffsets(), offsets.solvedAt > started.addingTimeInterval(20) {
                    solved[corner.name] = offsets
                }
            }
            return solved.count == Self.corners.count
        }
        #expect(published, "the lobby solved \(solved.keys.sorted()) only: \(lobby.child?.output ?? "")")
        // Their t − g, up to the one constant no reading sees, is the truth within 1 dB (the
        // issue's goal is 2 dB; 20 s of exchanges among four still devices give 0.3 dB or better).
        if published {
            let truth = Self.corners.map { $0.transmit - $0.receive }
            let found = Self.corners.map { solved[$0.name].map { $0.transmit - $0.receive } ?? .nan }
            let shift = zip(truth, found).map { $1 - $0 }.reduce(0, +) / Double(truth.count)
            for (index, corner) in Self.corners.enumerated() {
                #expect(abs(found[index] - shift - truth[index]) < 1, "\(corner.name): t − g \(found[index]) against \(truth[index]) (+\(shift))")
            }
            // Eve exchanged nothing (nobody hears her): she has no offsets.
            #expect(try await players["eve"]?.client.radioOffsets() == nil)
        }

        // Eve ranges one-way throughout. Before the offsets, alice (6 dB strong) read far too near
        // and bob (6 dB weak) far too far; with them, both come within 25 % of the truth.
        func distance(_ name: String) async -> Double? {
            let nearby = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await eve.send(.nearby))
            return nearby?.first { $0.username == name }?.distance
        }
        let corrected = await eventually(timeout: 60) {
            for name in ["alice", "bob"] {
                guard let metres = await distance(name), abs(metres - Self.truth) < 0.25 * Self.truth else { return false }
            }
            return true
        }
        let story = ["alice", "bob"].map { name in
            "\(name): " + recorder.events.filter { $0.player == name }.map { "\($0.kind.rawValue) \($0.distance ?? -1) \($0.ranging ?? "-")" }.joined(separator: ", ")
        }
        #expect(corrected, "eve never ranged alice and bob within 25 % of \(Self.truth) m: \(story) \(eve.process.output)")
        let first = { (name: String) in recorder.events.first { $0.player == name && $0.distance != nil }?.distance }
        let aliceBefore = try #require(first("alice"), "\(story)")
        let bobBefore = try #require(first("bob"), "\(story)")
        #expect(aliceBefore < 0.75 * Self.truth, "\(story)")
        #expect(bobBefore > 1.3 * Self.truth, "\(story)")
        #expect(recorder.events.allSatisfy { $0.ranging != "two-way" }, "eve, whom nobody hears, ranged two-way: \(story)")
    }
}
