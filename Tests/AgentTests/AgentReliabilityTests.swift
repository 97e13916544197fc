import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// The agent as a process that outlives trouble: the lobby stopped mid-game, the agent killed
/// with SIGKILL, SIGTERM, and users who are not its owner.
@Suite(.serialized) struct AgentReliabilityTests {
    /// The lobby's event kinds the agent turns into events of its own.
    static let lobbyKinds: Set<AgentEvent.Kind> = [.invitationReceived, .invitationAnswered, .invitationExpired, .gameStarted, .gameCancelled,
                                                   .roundFinished, .gameFinished, .unlocked, .unlockLost]

    /// Two agents on replayed radios that hear each other for ten minutes.
    static func twoAgents(in folder: String, lobby: LobbyProcess) async throws -> (RunningAgent, RunningAgent) {
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        try writeTrace(of: bob.beacon, rssi: -62, from: 0, seconds: 600, path: folder + "/heard-by-alice.jsonl")
        try writeTrace(of: alice.beacon, rssi: -64, from: 0, seconds: 600, path: folder + "/heard-by-bob.jsonl")
        var agents: [RunningAgent] = []
        for (player, trace) in [(alice, "heard-by-alice"), (bob, "heard-by-bob")] {
            agents.append(try RunningAgent.start(player, in: folder, radio: ["backend": "replay", "file": folder + "/\(trace).jsonl"],
                                                 extra: ["recordings": roundSamples + "/" + player.username]))
        }
        for agent in agents {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
        }
        #expect(await sees(agents[0], "bob"), "alice never saw bob: \(agents[0].process.output)")
        #expect(await sees(agents[1], "alice"), "bob never saw alice: \(agents[1].process.output)")
        return (agents[0], agents[1])
    }

    /// Waits until `agent` has handled every event the lobby holds for its player.
    static func caughtUp(_ agent: RunningAgent, timeout: Double = 30) async throws -> Bool {
        let last = try await lobbyEvents(agent.player.client).last?.cursor ?? 0
        return await eventually(timeout: timeout) { ((try? await agent.status())?.eventCursor ?? -1) >= last }
    }

    @Test(.timeLimit(.minutes(5))) func lobbyOutageAndSIGKILLLoseNothingAndRepeatNothing() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path
        let lobby = try await blocking { try LobbyProcess(folder: path, extraArguments: ["--minigames", "screamer,shaker,statue"]) }
        defer { lobby.kill() }
        let agents = try await Self.twoAgents(in: folder.path, lobby: lobby)
        var alice = agents.0
        let bob = agents.1
        defer { alice.process.kill(); bob.process.kill() }
        let carol = try await register("carol", at: lobby.url)

        // A game opens while everything is up; both agents hear that it started (and its plan).
        let game = try await inviteAndAccept(alice, bob).id
        for agent in [alice, bob] { #expect(try await Self.caughtUp(agent), "\(agent.username) missed the game's start") }

        // The lobby goes away. Both play their three rounds: `play` answers, the scores queue up.
        try await blocking { lobby.stop() }
        let reported = try await playRounds(game, [alice, bob])
        #expect(reported["alice"]?.keys.sorted() == [1, 2, 3] && reported["bob"]?.keys.sorted() == [1, 2, 3], "\(reported)")
        // Alice invites Bob to the next game: queued too.
        let invite = try LobbyClient.decoder.decode(QueuedOperation.self, from: try await alice.send(.invite(players: ["bob"])))
        #expect(invite.queued)
        #expect(try await alice.status().queued >= 4)
        #expect(try await bob.status().queued >= 3)
        let aliceCursor = try await alice.status().eventCursor

        // Alice's agent is killed; the lobby comes back while she is down, Bob's scores arrive, and
        // Carol (who met her) invites her: an event Alice's agent has not seen.
        alice.process.stop(signal: SIGKILL)
        try await blocking { try lobby.start() }
        #expect(await eventually(timeout: 60) { ((try? await bob.status())?.queued ?? 1) == 0 }, "bob's queue did not empty: \(bob.process.output)")
        let aliceBeacon = alice.player.beacon
        _ = try await carol.client.reportEncounters([EncounterSighting(uuid: aliceBeacon.uuid, major: aliceBeacon.major, minor: aliceBeacon.minor,
                                                                        distance: 2, at: Date())], key: "carol-meets-alice")
        // Alice's agent heard Carol too before it went down: a new account invites only players
        // met both ways (issue 21).
        _ = try await alice.player.client.reportEncounters([EncounterSighting(uuid: carol.beacon.uuid, major: carol.beacon.major,
                                                                              minor: carol.beacon.minor, distance: 2, at: Date())])
        let carolsInvitation = try await carol.client.invite(["alice"])

        // The lobby goes away again; Alice's agent restarts on the same state and her event
        // stream is open before the lobby returns.
        try await blocking { lobby.stop() }
        alice = try alice.restarted(log: folder.path + "/alice-2.log")
        #expect(await alice.waitUntilAnswering(), "alice's agent did not restart: \(alice.process.output)")
        #expect(try await alice.status().queued >= 4, "the queue did not survive SIGKILL")
        #expect(try await alice.status().eventCursor == aliceCursor)
        let recorder = try EventRecorder(socket: alice.socket)
        #expect(await recorder.waitUntilSubscribed())
        try await blocking { try lobby.start() }

        // Every round has exactly one score per player, the one `play` reported; the game ends the
        // same for both; both queues empty.
        try await expectFinished(game, reported: reported, alice, bob)
        // The invitation queued before the kill arrived once: one new game, not two.
        #expect(await eventually {
            let fromAlice = try? await bob.player.client.invitations().filter { $0.inviter == "alice" && $0.id != game }
            return fromAlice?.count == 1
        }, "alice's queued invitation did not arrive exactly once")
        let alicesGames = try await alice.player.client.games().filter { $0.inviter == "alice" }
        #expect(alicesGames.count == 2, "\(alicesGames.map(\.id))")

        // The events since the kill, as the lobby holds them, each reached Alice's stream once.
        #expect(try await Self.caughtUp(alice), "alice's agent did not catch up with the lobby's events")
        let missed = try await lobbyEvents(alice.player.client, after: aliceCursor).filter { $0.agentKind != nil }
        #expect(missed.contains { $0.kind == "invitationReceived" && $0.data.game == carolsInvitation.id }, "\(missed.map(\.kind))")
        #expect(missed.contains { $0.kind == "gameFinished" && $0.data.game == game })
        let shown = recorder.events.filter { Self.lobbyKinds.contains($0.kind) }
        struct Key: Hashable { var kind: AgentEvent.Kind?; var game: Int64?; var round: Int?; var player: String? }
        let expected = missed.map { Key(kind: $0.agentKind, game: $0.data.game, round: $0.data.round, player: $0.data.player) }
        let got = shown.map { Key(kind: $0.kind, game: $0.game, round: $0.round, player: $0.player) }
        #expect(got.count == expected.count, "lobby: \(expected)\nshown: \(got)")
        for key in Set(expected) {
            #expect(got.filter { $0 == key }.count == expected.filter { $0 == key }.count, "\(key)")
        }
    }

    @Test(.timeLimit(.minutes(5))) func sigtermStopsTheRadioFlushesTheQueueAndExitsZero() async throws {
        let room = try await SimulatedAirAgentTests.Room()
        defer { room.stopAll() }
        let hub = try await room.startAir(SimulatedAirAgentTests.approach)
        defer { hub.kill() }
        let (alice, bob) = (room.alice, room.bob)
        for agent in [alice, bob] {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
        }
        #expect(await sees(alice, "bob"), "alice never saw bob: \(alice.process.output)")
        #expect(try await blocking { hub.waitFor("alice advertises") && hub.waitFor("alice scans") }, "\(hub.output)")

        // With the lobby up: an invitation queued just before SIGTERM reaches the lobby.
        let recorder = try EventRecorder(socket: alice.socket)
        #expect(await recorder.waitUntilSubscribed())
        let inviting = Task { try? await alice.send(.invite(players: ["bob"])) }
        defer { inviting.cancel() }
        #expect(await eventually { recorder.events.contains { $0.kind == .queued } })
        let started = Date()
        let status = try await blocking { alice.process.stop(signal: SIGTERM) }
        let took = Date().timeIntervalSince(started)
        #expect(status == 0, "\(alice.process.output)")
        // Under a second when idle; an agent that did not stop would be killed after 30 s.
        #expect(took < 15, "SIGTERM took \(took) s")
        #expect(!FileManager.default.fileExists(atPath: alice.socket))
        // It left the air: stopped advertising and scanning.
        #expect(try await blocking { hub.waitFor("alice stopped advertising", timeout: 10) }, "\(hub.output)")
        #expect(try await blocking { hub.waitFor("alice left the simulated air", timeout: 10) }, "\(hub.output)")
        #expect(await eventually(timeout: 30) {
            (try? await bob.player.client.invitations())?.filter { $0.inviter == "alice" }.count == 1
        }, "the invitation queued before SIGTERM did not reach the lobby: \(alice.process.output)")

        // The lobby comes back just as SIGTERM arrives: Bob's refusal, queued while it was away
        // (his sender now waiting out its backoff), is delivered by the shutdown's flush.
        let invitation = try #require(try await bob.player.client.invitations().first { $0.inviter == "alice" })
        try await blocking { room.lobby.stop() }
        let bobsRecorder = try EventRecorder(socket: bob.socket)
        #expect(await bobsRecorder.waitUntilSubscribed())
        let declining = Task { try? await bob.send(.decline(invitation: invitation.id)) }
        defer { declining.cancel() }
        #expect(await eventually { bobsRecorder.events.contains { $0.kind == .queued && $0.operation?.hasPrefix("refusal") == true } })
        #expect(await eventually { bobsRecorder.events.contains { $0.kind == .lobbyDisconnected } })
        try await blocking { try room.lobby.start() }
        let bobStarted = Date()
        let bobStatus = try await blocking { bob.process.stop(signal: SIGTERM) }
        let bobTook = Date().timeIntervalSince(bobStarted)
        #expect(bobStatus == 0, "\(bob.process.output)")
        #expect(bobTook < 5, "SIGTERM took \(bobTook) s")
        let answered = try await alice.player.client.game(invitation.id)
        #expect(answered.state != .pending, "bob's refusal did not reach the lobby: \(answered.state)\n\(bob.process.output)")

        // With the lobby away: the queue gets its 3 s, no more, and the agent still exits 0; what
        // is left waits in its state for the next start.
        try await blocking { room.lobby.stop() }
        let alice2 = try alice.restarted(log: room.folder.path + "/alice-2.log")
        defer { alice2.process.kill() }
        #expect(await alice2.waitUntilAnswering(), "\(alice2.process.output)")
        let aliceRecorder = try EventRecorder(socket: alice2.socket)
        #expect(await aliceRecorder.waitUntilSubscribed())
        let blockingCarol = Task { try? await alice2.send(.block(player: "carol")) }
        defer { blockingCarol.cancel() }
        #expect(await eventually { aliceRecorder.events.contains { $0.kind == .queued && $0.operation == "block of carol" } })
        let aliceStarted = Date()
        let aliceStatus = try await blocking { alice2.process.stop(signal: SIGTERM) }
        let aliceTook = Date().timeIntervalSince(aliceStarted)
        #expect(aliceStatus == 0, "\(alice2.process.output)")
        #expect(aliceTook < Double(Agent.flushDeadline.components.seconds) + 2, "SIGTERM with the lobby away took \(aliceTook) s")
        #expect(alice2.process.output.contains("wait in the queue for the next start"), "\(alice2.process.output)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run the CLI as another user"), .timeLimit(.minutes(5)))
    func localAPIRefusesAnotherUserAndNamesTheBadField() async throws {
        let folder = try TemporaryFolder()
        // Nobody (65534) must reach the socket's folder to be refused there.
        chmod(folder.path, 0o755)
        let path = folder.path
        let lobby = try await blocking { try LobbyProcess(folder: path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        try writeTrace(of: alice.beacon, rssi: -70, from: 0, seconds: 5, path: folder.path + "/quiet.jsonl")
        let agent = try RunningAgent.start(alice, in: folder.path, radio: ["backend": "replay", "file": folder.path + "/quiet.jsonl"])
        defer { agent.process.kill() }
        #expect(await agent.waitUntilAnswering(), "the agent did not start: \(agent.process.output)")
        let run = (agent.socket as NSString).deletingLastPathComponent
        chmod(folder.path + "/alice", 0o755)
        #expect(try mode(of: run) == 0o700)
        #expect(try mode(of: agent.socket) == 0o600)

        // The CLI as user nobody: refused, and the message says why.
        let cli = try ChildProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", try builtExecutable("nearplay"),
                                                         "nearby", "--socket", agent.socket], log: folder.path + "/cli-nobody.log")
        await cli.process.wait()
        #expect(cli.process.status != 0)
        #expect(cli.output.lowercased().contains("permission"), "\(cli.output)")

        // A malformed request gets a JSON error naming the field; the connection still serves.
        let replies = try await blocking {
            try rawExchange(agent.socket, ["{\"verb\":\"accept\",\"id\":\"seven\"}", "{\"verb\":\"invite\",\"players\":[]}", "{\"verb\":\"status\"}"])
        }
        #expect(replies.count == 3)
        func error(_ reply: String) -> (code: String, message: String)? {
            guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], object["ok"] as? Bool == false,
                  let error = object["error"] as? [String: Any], let code = error["code"] as? String, let message = error["message"] as? String
            else { return nil }
            return (code, message)
        }
        let badID = try #require(replies.first.flatMap(error), "\(replies)")
        #expect(badID.code == "badRequest" && badID.message.hasPrefix("id:"), "\(badID)")
        let noPlayers = try #require(replies.dropFirst().first.flatMap(error), "\(replies)")
        #expect(noPlayers.code == "badRequest" && noPlayers.message.hasPrefix("players:"), "\(noPlayers)")
        #expect(replies.count > 2 && replies[2].hasPrefix("{\"ok\":true"), "\(replies)")
        #expect(agent.process.process.isRunning)
    }
}
