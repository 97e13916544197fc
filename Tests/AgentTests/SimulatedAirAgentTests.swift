import Agent
import BeaconFrames
import BusTestSupport
import DatabaseTestSupport
import Foundation
import LobbyClient
import Testing

/// Two `nearplay agent` processes in one simulated room (a `nearplay air` hub), a live lobby:
/// the agents find each other over the air with distances that follow the scenario, and carry a
/// whole game through their local APIs.
@Suite(.serialized) struct SimulatedAirAgentTests {
    /// Bob stands still; Alice waits 12 m away, walks up to 1.5 m from him between 12 s and 20 s,
    /// and stays there. (The wait leaves the agents, started before the hub, time to join the air
    /// and recognise each other at 12 m even on a loaded machine.) The path-loss exponent is the
    /// one ranging assumes (2.8), so a distance of 12 m reads as about 12 m, not 6.
    static let approach = """
        {"exponent": 2.8, "sigma": 1.0, "loss": 0.0, "seed": 7,
         "devices": {
           "alice": {"waypoints": [[0, 12, 0], [12, 12, 0], [20, 1.5, 0], [3600, 1.5, 0]]},
           "bob": {"waypoints": [[0, 0, 0]]}
         }}
        """

    /// A lobby, two registered players and their agents on the simulated air (the hub not started yet).
    struct Room {
        let folder: TemporaryFolder
        let lobby: LobbyProcess
        let airSocket: String
        var alice: RunningAgent
        var bob: RunningAgent

        /// With `onPostgres`, the lobby keeps its state in a new database of the test cluster.
        init(lobbyArguments: [String] = [], onPostgres: Bool = false) async throws {
            folder = try TemporaryFolder()
            let path = folder.path
            let database = onPostgres ? try await PrivatePostgres.shared().createDatabase() : nil
            lobby = try await blocking {
                try LobbyProcess(folder: path, database: database, extraArguments: ["--minigames", "screamer,shaker,statue"] + lobbyArguments)
            }
            airSocket = folder.path + "/air/air.sock"
            let players = [try await register("alice", at: lobby.url), try await register("bob", at: lobby.url)]
            var agents: [RunningAgent] = []
            for player in players {
                agents.append(try RunningAgent.start(player, in: folder.path, radio: ["backend": "sim", "air_socket": airSocket, "device": player.username],
                                                     extra: ["recordings": roundSamples + "/" + player.username]))
            }
            (alice, bob) = (agents[0], agents[1])
        }

        /// Starts `nearplay air` on `scenario` (scenario time starts now) and waits until it listens.
        func startAir(_ scenario: String) async throws -> ChildProcess {
            let path = folder.path + "/scenario.json"
            try scenario.write(toFile: path, atomically: true, encoding: .utf8)
            let hub = try ChildProcess(try builtExecutable("nearplay"), ["air", "--scenario", path, "--socket", airSocket, "--verbose"],
                                       log: folder.path + "/air.log")
            guard try await blocking({ hub.waitFor("air listening on") }) else {
                Issue.record("the hub did not start: \(hub.output)")
                throw AgentError("hub did not start")
            }
            return hub
        }

        /// Kills everything without waiting (it runs in a `defer`).
        func stopAll() {
            alice.process.kill()
            bob.process.kill()
            lobby.kill()
        }
    }

    /// Identities that change every 3 s (issue 22): Alice's agent shows Bob all along, under one
    /// identity after another, and never says he left.
    @Test(.timeLimit(.minutes(3))) func aPlayerStaysNearbyWhileTheirIdentityRollsOver() async throws {
        let room = try await Room(lobbyArguments: ["--rotation-period", "3"])
        defer { room.stopAll() }
        let (alice, bob) = (room.alice, room.bob)
        for agent in [alice, bob] {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
        }
        let hub = try await room.startAir("""
            {"exponent": 2.8, "sigma": 1.0, "loss": 0.0, "seed": 3,
             "devices": {"alice": {"waypoints": [[0, 2, 0]]}, "bob": {"waypoints": [[0, 0, 0]]}}}
            """)
        defer { hub.kill() }
        func nearby() async -> [NearbyPlayer] {
            (try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await alice.send(.nearby))) ?? []
        }
        #expect(await eventually(timeout: 60) { await nearby().contains { $0.username == "bob" } }, "\(alice.process.output)")
        var identities: Set<String> = []
        var gaps = 0
        let end = Date().addingTimeInterval(13)
        while Date() < end {
            if let seen = await nearby().first(where: { $0.username == "bob" }) { identities.insert(seen.beacon) } else { gaps += 1 }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(gaps == 0, "Bob was missing from `nearby` \(gaps) times")
        #expect(identities.count >= 3, "Bob's identity should have rolled over at least twice in 13 s: \(identities)")
        let events = try await blocking { () -> [AgentEvent] in
            var events: [AgentEvent] = []
            try alice.client.events(recent: AgentEventBus.historyLimit, idleTimeout: 1) { line in
                if let event = try? LobbyClient.decoder.decode(AgentEvent.self, from: Data(line.utf8)) { events.append(event) }
                return true
            }
            return events
        }
        #expect(events.filter { $0.kind == .playerNearby && $0.player == "bob" }.count == 1, "Bob arrived once: \(events.map(\.kind))")
        #expect(!events.contains { $0.kind == .playerGone && $0.player == "bob" }, "Bob never left")
        let answer = try await bob.send(.metrics)
        let metrics = (try? JSONDecoder().decode(String.self, from: answer)) ?? String(decoding: answer, as: UTF8.self)
        let rotations = metrics.split(separator: "\n").first { $0.hasPrefix("nearplay_agent_identity_rotations_total") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        #expect(rotations >= 4, "\(metrics)")
    }

    /// The story once with the lobby on SQLite and once on PostgreSQL (issue 23).
    @Test(.timeLimit(.minutes(5)), arguments: [false, true])
    func aliceWalksUpToBobTheyMeetAndPlayAWholeGame(lobbyOnPostgres: Bool) async throws {
        let room = try await Room(onPostgres: lobbyOnPostgres)
        defer { room.stopAll() }
        let (alice, bob) = (room.alice, room.bob)
        for agent in [alice, bob] {
            #expect(await agent.waitUntilAnswering(), "\(agent.username)'s agent did not start: \(agent.process.output)")
        }

        // Alice's event stream, as `nearplay events` reads it, from before the air exists until
        // she reports Bob within 3 m (or a minute passes).
        let client = alice.client
        async let aliceEvents: [AgentEvent] = blocking {
            var seen: [AgentEvent] = []
            let deadline = Date().addingTimeInterval(60)
            // From the agent's start: the stream may open after its first report of Bob.
            try? client.events(recent: AgentEventBus.historyLimit, idleTimeout: 60) { line in
                guard let event = try? JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)) else { return true }
                if event.player == "bob", [.playerNearby, .playerMoved, .playerGone].contains(event.kind) { seen.append(event) }
                let close = event.kind == .playerMoved && event.player == "bob" && (event.distance ?? .infinity) < 3
                return !close && Date() < deadline
            }
            return seen
        }
        let hub = try await room.startAir(Self.approach)
        defer { hub.kill() }

        let seen = try await aliceEvents
        let first = try #require(seen.first, "alice never reported bob: \(alice.process.output)\n\(hub.output)")
        #expect(first.kind == .playerNearby)
        #expect(first.name == "Bob Tester")
        // Bob's agent advertises his registered beacon until it holds this period's rotation key,
        // then the period's identity; which one Alice hears first depends on how fast the lobby
        // answers Bob (the PostgreSQL lobby is often slower). Either way it must be Bob's: the
        // lobby resolves the identity she reported to him.
        let heard = try #require(first.beacon.flatMap { BeaconIdentity($0) }, "\(first)")
        if first.beacon != bob.player.beacon.beaconIdentity?.description {
            #expect(try await alice.player.client.resolve(heard).username == "bob", "\(first)")
        }
        let story = "\(seen.map { "\($0.kind.rawValue) \($0.distance.map { String($0) } ?? "-")" })"
        // After the first report, Bob only moves (a gone must come before he is nearby again).
        #expect(seen.dropFirst().contains { $0.kind == .playerMoved }, "\(story)")
        var present = false
        for event in seen {
            switch event.kind {
            case .playerNearby:
                #expect(!present, "bob reported nearby twice without leaving: \(story)")
                present = true
            case .playerMoved: #expect(present, "bob moved before he was nearby: \(story)")
            default: present = false
            }
        }
        let reports = seen.filter { $0.kind != .playerGone }
        let distances = reports.compactMap(\.distance)
        #expect(distances.count == reports.count, "every report carries a distance")
        // The distance falls as she approaches: from the first report to the last, and to within 3 m.
        let last = try #require(distances.last)
        #expect(last < 3)
        #expect(try #require(distances.first) > 6, "alice was first reported at \(distances.first ?? 0) m, not near 12 m")
        #expect(try #require(distances.first) > last + 2, "\(distances)")
        // Bob's agent hears Alice's advertiser too.
        #expect(await sees(bob, "alice"), "bob never saw alice: \(bob.process.output)")
        let bobsView = try LobbyClient.decoder.decode([NearbyPlayer].self, from: try await bob.send(.nearby)).first { $0.username == "alice" }
        #expect(bobsView?.name == "Alice Tester")

        // The invitation, its acceptance and three rounds, all through the agents' local APIs; the
        // lobby verifies every score; the result and unlocks from both sides.
        let invitation = try await inviteAndAccept(alice, bob)
        let reported = try await playRounds(invitation.id, [alice, bob])
        try await expectFinished(invitation.id, reported: reported, alice, bob)
    }
}
