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
    @Test(.timeLimit(.minutes(5))) func meetInvitePlayThreeVerifiedRoundsAndUnlock() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path, extraArguments: ["--minigames", "screamer,shaker,statue"]) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        // Each hears the other: a replayed radio per agent.
        try writeTrace(of: bob.beacon, rssi: -62, from: 0, seconds: 120, path: folder.path + "/heard-by-alice.jsonl")
        try writeTrace(of: alice.beacon, rssi: -64, from: 0, seconds: 120, path: folder.path + "/heard-by-bob.jsonl")
        var players: [RunningAgent] = []
        for (player, trace) in [(alice, "heard-by-alice"), (bob, "heard-by-bob")] {
            players.append(try RunningAgent.start(player, in: folder.path, radio: ["backend": "replay", "file": folder.path + "/\(trace).jsonl"],
                                                  extra: ["recordings": roundSamples + "/" + player.username]))
        }
        let (a, b) = (players[0], players[1])
        defer { for p in players { p.process.kill() } }
        for p in players {
            #expect(await eventually { FileManager.default.fileExists(atPath: p.socket) }, "\(p.username)'s agent did not start: \(p.process.output)")
        }

        // Each sees the other (the lobby lets players invite only those they met); inviting goes
        // through Alice's agent's queue and comes back with the invitation, which Bob accepts.
        #expect(await sees(a, "bob"), "alice never saw bob: \(a.process.output)")
        #expect(await sees(b, "alice"), "bob never saw alice: \(b.process.output)")
        let invitation = try await inviteAndAccept(a, b)

        // A forged claim is refused: Bob's real recording of round 1, with 100 points more claimed.
        let game = try await bob.client.game(invitation.id)
        let first = try #require(game.rounds.first)
        let minigame = try #require(MinigameCatalog.game(named: first.game.name))
        let setup = try SensorRoundPlayer(sensors: SensorSetup(), recordings: roundSamples + "/bob", calibration: SensorCalibration()).setup(for: minigame.name)
        let recording = try await RoundRunner(sensors: setup).play(minigame, plan: RoundPlan(duration: first.duration, signalTime: first.signalTime),
                                                                 calibration: SensorCalibration())
        let honest = minigame.score(recording).score
        await #expect {
            _ = try await bob.client.submitScore(game: invitation.id, round: first.n, score: min(1000, honest + 100), recording: recording, key: "forged")
        } throws: { error in
            (error as? LobbyClientError)?.status == 422 && (error as? LobbyClientError)?.code == "scoreRefused"
        }

        // Three rounds each, played by the agents from the recorded inputs; the lobby verifies every
        // score and the game ends the same for both.
        let reported = try await playRounds(invitation.id, players)
        try await expectFinished(invitation.id, reported: reported, a, b)
    }
}
