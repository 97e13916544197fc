import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// Fault soak (a benchmark, not part of the suite: `Benchmarks/agent-soak` runs it with
/// `NEARPLAY_SOAK=CYCLES`): two agents on replayed radios play game after game; in each cycle
/// Alice's agent is killed with SIGKILL twice, once during a game with the lobby up (right after
/// `play` answered) and once while the lobby is away with her scores and an invitation waiting in
/// her queue. After each cycle it counts what Alice's agent accepted into its queue that the lobby
/// does not hold (lost) and what the lobby holds more than once (sent twice), and prints them.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["NEARPLAY_SOAK"] != nil, "a soak: Benchmarks/agent-soak"))
struct AgentSoak {
    @Test func sigkillDuringGamesAndWhileOfflineLosesNothingAndRepeatsNothing() async throws {
        let cycles = Int(ProcessInfo.processInfo.environment["NEARPLAY_SOAK"] ?? "") ?? 5
        let folder = try TemporaryFolder()
        let path = folder.path
        let lobby = try await blocking { try LobbyProcess(folder: path, extraArguments: ["--minigames", "screamer,shaker,statue"]) }
        defer { lobby.kill() }
        let agents = try await AgentReliabilityTests.twoAgents(in: folder.path, lobby: lobby)
        var alice = agents.0
        let bob = agents.1
        defer { alice.process.kill(); bob.process.kill() }
        var restarts = 0
        func restart() async throws {
            restarts += 1
            alice = try alice.restarted(log: path + "/alice-\(restarts).log")
            #expect(await alice.waitUntilAnswering(), "alice's agent did not restart: \(alice.process.output)")
        }

        var accepted = 0
        var lost = 0
        var twice = 0
        var game = try await inviteAndAccept(alice, bob).id
        for cycle in 1...cycles {
            for agent in [alice, bob] { #expect(try await AgentReliabilityTests.caughtUp(agent)) }
            // During a game, lobby up: killed right after `play` answered for round 1.
            var reported: [String: [Int: Int]] = [:]
            let first = try LobbyClient.decoder.decode(RoundReport.self, from: try await alice.send(.play(game: game)))
            reported["alice", default: [:]][first.round] = first.score
            accepted += 1
            alice.process.stop(signal: SIGKILL)
            try await restart()
            let second = try await playRounds(game, [bob])
            reported["bob"] = second["bob"]
            // Bob's scores are in before the lobby goes: else Alice's queued invitation would reach
            // a game still open and be refused (an answer, not a loss, but not what this counts).
            #expect(await eventually(timeout: 60) { ((try? await bob.status())?.queued ?? 1) == 0 }, "bob's queue did not empty")
            // Offline: the lobby goes away; Alice plays her last two rounds and invites Bob to
            // the next game, all into her queue; her agent is killed and started again.
            try await blocking { lobby.stop() }
            for _ in 1...2 {
                let report = try LobbyClient.decoder.decode(RoundReport.self, from: try await alice.send(.play(game: game)))
                reported["alice", default: [:]][report.round] = report.score
                accepted += 1
            }
            let invite = try LobbyClient.decoder.decode(QueuedOperation.self, from: try await alice.send(.invite(players: ["bob"])))
            #expect(invite.queued)
            accepted += 1
            alice.process.stop(signal: SIGKILL)
            try await restart()
            try await blocking { try lobby.start() }
            #expect(await eventually(timeout: 60) { ((try? await alice.status())?.queued ?? 1) == 0 }, "alice's queue did not empty")

            // What the lobby holds of what Alice's queue accepted: her three scores, and one
            // invitation to the next game.
            let final = try await alice.player.client.game(game)
            for round in final.rounds where round.scores["alice"] != reported["alice"]?[round.n] {
                lost += 1
                print("agent-soak: game \(game) round \(round.n): alice's agent reported \(reported["alice"]?[round.n].map(String.init) ?? "nothing"), "
                      + "the lobby holds \(round.scores["alice"].map(String.init) ?? "nothing")")
            }
            let next = try await bob.player.client.invitations().filter { $0.inviter == "alice" && $0.state == .pending }
            if next.isEmpty { lost += 1 }
            twice += max(0, next.count - 1)
            print("agent-soak cycle \(cycle): game \(game) \(final.state); accepted into the queue so far \(accepted), lost \(lost), sent twice \(twice)")
            guard let invitation = next.first else { break }
            let answered = try LobbyClient.decoder.decode(Invitation.self, from: try await bob.send(.accept(invitation: invitation.id)))
            #expect(answered.state == .open)
            game = invitation.id
        }
        print("agent-soak: \(cycles) cycles, \(2 * cycles) SIGKILLs of an agent (during a game; offline with a full queue); "
              + "\(accepted) operations accepted into its queue, \(lost) lost, \(twice) sent twice")
        #expect(lost == 0)
        #expect(twice == 0)
    }
}
