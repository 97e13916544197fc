import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Minigames
import SensorSamples
import Testing

/// Plays nothing: records the plans it is handed and answers a device that never moved.
private final class PlanRecorder: RoundPlaying, @unchecked Sendable {
    private let lock = NSLock()
    private var plans: [RoundPlanned] = []
    var played: [RoundPlanned] { lock.withLock { plans } }
    var countdown: Double { 0 }

    func play(_ round: RoundPlanned) async throws -> PlayedRound {
        lock.withLock { plans.append(round) }
        let samples = (0..<800).map {
            AccelerationSample(time: Double($0) / 100 + 0.0003 * sin(Double($0)), x: 0.02 * sin(Double($0) * 1.7), y: 0, z: standardGravity)
        }
        let recording = RoundRecording(game: round.minigame, duration: round.duration ?? 8, signalTime: round.signalTime, accelerations: samples)
        return PlayedRound(score: Quickdraw().score(recording).score, recording: recording)
    }
}

/// Issue 21, point 12: Quickdraw's plan has no signal; the agent asks the lobby for it as the
/// round starts and plays on the delay the lobby revealed.
@Suite(.serialized) struct QuickdrawRevealTests {
    @Test(.timeLimit(.minutes(5))) func theAgentAsksTheLobbyForTheSignalAsAQuickdrawRoundStarts() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path, extraArguments: ["--minigames", "quickdraw"]) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        // Met both ways, as two agents on the air report each other.
        _ = try await bob.client.reportEncounters([EncounterSighting(uuid: alice.beacon.uuid, major: alice.beacon.major, minor: alice.beacon.minor,
                                                                      distance: 1, at: Date())])
        _ = try await alice.client.reportEncounters([EncounterSighting(uuid: bob.beacon.uuid, major: bob.beacon.major, minor: bob.beacon.minor,
                                                                        distance: 1, at: Date())])
        let invitation = try await alice.client.invite(["bob"])
        _ = try await bob.client.accept(invitation: invitation.id)
        #expect(try await alice.client.game(invitation.id).rounds.allSatisfy { $0.game.rawValue == "quickdraw" && $0.signalTime == nil })

        let store = try AgentStore(directory: folder.path + "/state")
        let events = AgentEventBus()
        let recorder = PlanRecorder()
        let session = GameSession(store: store, lobby: alice.client, outbox: Outbox(store: store, lobby: alice.client, events: events),
                                  events: events, username: "alice", player: recorder)
        let asked = Date()
        let report = try await session.playNext(game: invitation.id)
        #expect(report.minigame == "quickdraw")
        let plan = try #require(recorder.played.first)
        // Asking again answers the agent's reveal: the same signal, revealed when the round started.
        let reveal = try await alice.client.revealSignal(game: invitation.id, round: report.round)
        #expect(plan.signalTime == reveal.signalTime)
        #expect(Quickdraw().signalDelay.contains(reveal.signalTime))
        #expect(reveal.revealedAt.timeIntervalSince(asked) > -1 && reveal.revealedAt <= Date())
    }
}
