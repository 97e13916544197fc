import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Minigames
import Rounds
import SensorSamples
import Testing

/// Two agents, a live lobby, the whole story: they see each other, one invites, the other
/// accepts, both play three rounds from recorded sensor inputs, the lobby verifies every score,
/// and the game ends with a winner and unlocks — checked from both sides.
@Suite(.serialized) struct TwoPlayerTests {
    static let samples = repositoryRoot.appendingPathComponent("Samples/rounds").path

    struct Player {
        var test: TestPlayer
        var socket: String
        var process: ChildProcess
        var client: AgentClient { AgentClient(path: socket) }

        func send(_ request: AgentRequest) async throws -> Data {
            let client = client
            return try await blocking { try client.send(request, timeout: 60) }
        }
    }

    @Test(.timeLimit(.minutes(4))) func meetInvitePlayThreeVerifiedRoundsAndUnlock() async throws {
        let folder = try TemporaryFolder()
        let lobby = try LobbyProcess(folder: folder.path, extraArguments: ["--minigames", "screamer,shaker,statue"])
        defer { lobby.stop() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        // Each hears the other: a replayed radio per agent.
        try AgentProcessTests.trace(of: bob.beacon, rssi: -62, from: 0, seconds: 120, path: folder.path + "/heard-by-alice.jsonl")
        try AgentProcessTests.trace(of: alice.beacon, rssi: -64, from: 0, seconds: 120, path: folder.path + "/heard-by-bob.jsonl")
        var players: [Player] = []
        for (player, trace) in [(alice, "heard-by-alice"), (bob, "heard-by-bob")] {
            let (config, socket) = try AgentProcessTests.prepareAgent(
                player, in: folder.path, radio: ["backend": "replay", "file": folder.path + "/\(trace).jsonl"],
                extra: ["recordings": Self.samples + "/" + player.username])
            let process = try ChildProcess(try builtExecutable("nearplay"), ["agent", "--config", config], log: folder.path + "/\(player.username).log")
            players.append(Player(test: player, socket: socket, process: process))
        }
        let (a, b) = (players[0], players[1])
        defer { for p in players { p.process.stop(signal: SIGKILL) } }
        for p in players {
            #expect(await eventually { FileManager.default.fileExists(atPath: p.socket) }, "\(p.test.username)'s agent did not start: \(p.process.output)")
        }

        // Alice sees Bob; inviting goes through her agent's queue and comes back with the invitation.
        #expect(await eventually {
            let nearby = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await a.send(.nearby))
            return nearby?.contains { $0.username == "bob" } == true
        }, "alice never saw bob: \(a.process.output)")
        // Bob must have reported Alice too (the lobby lets players invite only those who met).
        #expect(await eventually {
            let nearby = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await b.send(.nearby))
            return nearby?.contains { $0.username == "alice" } == true
        })
        let invitation = try LobbyClient.decoder.decode(Invitation.self, from: try await a.send(.invite(players: ["bob"])))
        #expect(invitation.invitees.map(\.username) == ["bob"])

        // Bob's agent learns of it over the lobby's event stream and lists it.
        #expect(await eventually {
            let pending = try? LobbyClient.decoder.decode([Invitation].self, from: try await b.send(.invitations))
            return pending?.contains { $0.id == invitation.id } == true
        })
        let accepted = try LobbyClient.decoder.decode(Invitation.self, from: try await b.send(.accept(invitation: invitation.id)))
        #expect(accepted.state == "open")

        // A forged claim is refused: Bob's real recording of round 1, with 100 points more claimed.
        let game = try await bob.client.game(invitation.id)
        let first = try #require(game.rounds.first)
        let minigame = try #require(MinigameCatalog.game(named: first.game))
        let setup = try SensorRoundPlayer(sensors: SensorSetup(), recordings: Self.samples + "/bob", calibration: SensorCalibration()).setup(for: minigame.name)
        let recording = try await RoundRunner(sensors: setup).play(minigame, plan: RoundPlan(duration: first.duration, signalTime: first.signalTime),
                                                                 calibration: SensorCalibration())
        let honest = minigame.score(recording).score
        await #expect {
            _ = try await bob.client.submitScore(game: invitation.id, round: first.n, score: min(1000, honest + 100), recording: recording, key: "forged")
        } throws: { error in
            (error as? LobbyClientError)?.status == 422 && (error as? LobbyClientError)?.code == "scoreRefused"
        }

        // Three rounds each, played by the agents from the recorded inputs.
        var reported: [String: [Int: Int]] = [:]
        for _ in 1...3 {
            for p in players {
                let report = try LobbyClient.decoder.decode(RoundReport.self, from: try await p.send(.play(game: invitation.id)))
                reported[p.test.username, default: [:]][report.round] = report.score
            }
        }
        #expect(reported["alice"]?.count == 3 && reported["bob"]?.count == 3)
        // Both rounds' scores reach the lobby (verified there) exactly as the agents computed them.
        var finished: LobbyGame?
        #expect(await eventually(timeout: 30) {
            finished = try? await alice.client.game(invitation.id)
            return finished?.state == "finished"
        }, "the game did not finish: \(a.process.output)\n\(b.process.output)")
        let final = try #require(finished)
        for round in final.rounds {
            #expect(round.scores["alice"] == reported["alice"]?[round.n])
            #expect(round.scores["bob"] == reported["bob"]?[round.n])
        }
        // Bob sees the same end.
        let bobsView = try LobbyClient.decoder.decode([LobbyGame].self, from: try await b.send(.games)).first { $0.id == invitation.id }
        #expect(bobsView?.state == "finished")
        #expect(bobsView?.winner == final.winner)
        // The winner unlocked the loser; a draw unlocks both.
        let unlockedByAlice = try LobbyClient.decoder.decode([UnlockedPlayer].self, from: try await a.send(.unlocked)).map(\.username)
        let unlockedByBob = try LobbyClient.decoder.decode([UnlockedPlayer].self, from: try await b.send(.unlocked)).map(\.username)
        switch final.winner {
        case "alice"?: #expect(unlockedByAlice == ["bob"])
        case "bob"?: #expect(unlockedByBob == ["alice"])
        default: #expect(unlockedByAlice == ["bob"] && unlockedByBob == ["alice"])
        }
        // The queues are empty: everything arrived.
        for p in players {
            let status = try LobbyClient.decoder.decode(AgentStatus.self, from: try await p.send(.status))
            #expect(await eventually { ((try? LobbyClient.decoder.decode(AgentStatus.self, from: try await p.send(.status)))?.queued ?? 1) == 0 }, "\(status)")
        }
    }
}
