import Agent
import ArgumentParser
import Foundation
import Radio
import LobbyClient
import Minigames
import SystemSupport

/// `nearplay demo`: the whole product on one machine, no hardware.
struct DemoCommand: AsyncParsableCommand {
    /// The demo's rotation period, in seconds: short, so identities change while it runs.
    static let rotationPeriod = 20
    /// The minigames the demo's lobby deals: those Samples/rounds has recorded inputs of for each player.
    static let minigames: [MinigameName] = [.screamer, .shaker, .statue]

    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Watch two players meet, play and unlock each other: a lobby, a simulated room and three agents.",
        discussion: """
            Starts a lobby on a temporary SQLite file, a simulated air (Alice walks up to Bob, Carol \
            stands aside) and an agent for each player, then drives the agents through their local \
            API as the CLI does: Alice's agent finds Bob nearby with a distance, she invites him, he \
            accepts, and they play three rounds from recorded sensor inputs, each verified by the \
            lobby. Everything it started is stopped and removed at the end, or on Ctrl-C.
            """
    )

    @Option(help: "Slow the story down (0.5: half speed) or speed it up.")
    var speed: Double = 1

    @Flag(help: "Print every event of every agent as JSON Lines ({\"agent\":…, then the event}) instead of the narration.")
    var json = false

    @Option(help: ArgumentHelp("The recorded round inputs (default: Samples/rounds of this checkout).", valueName: "dir"))
    var samples: String?

    func validate() throws {
        guard speed.isFinite, speed >= 0.1, speed <= 4 else { throw ValidationError("--speed must be between 0.1 and 4, not \(speed).") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let binaries = LobbyCommand.executableFolder()
        let samples = try samplesFolder(binaries: binaries)
        let world = try DemoWorld(binaries: binaries)
        // Ctrl-C or SIGTERM: stop every child and remove the folder, then exit 130.
        let interrupt = InterruptHandler {
            world.stop()
            _exit(130)
        }
        defer { withExtendedLifetime(interrupt) {} }
        defer { world.stop() }

        let names = ["alice": "Alice", "bob": "Bob", "carol": "Carol"]
        let narrator = Narrator(start: started, json: json, names: names)
        narrator.say("Starting a lobby on a temporary database, a simulated room and three agents…")
        narrator.say("Each agent advertises a beacon identity that changes every \(Self.rotationPeriod) s here (15 minutes in a deployment), from a new address each time: only the lobby can tell whose it is.")
        let listening = try world.start("lobby", "nearplay-lobby",
                                        ["serve", "--db", world.folder + "/lobby.sqlite", "--host", "127.0.0.1", "--port", "0",
                                         "--bcrypt-cost", "4", "--minigames", Self.minigames.map(\.rawValue).joined(separator: ","),
                                         "--rotation-period", String(Self.rotationPeriod)],
                                        ready: "lobby listening on ")
        guard let lobby = listening?.split(separator: " ").last.map(String.init), lobby.hasPrefix("http://") else {
            throw CommandFailure("""
                The demo's lobby started but did not say where it listens: it printed “\(listening ?? "")” instead of \
                “lobby listening on http://HOST:PORT”. nearplay-lobby in \(binaries) is probably from another build: \
                run `swift build` and start the demo again.
                """)
        }
        let scenario = world.folder + "/room.json"
        try DemoScenario.json.write(toFile: scenario, atomically: true, encoding: .utf8)
        let airSocket = world.folder + "/air.sock"
        try world.start("air", "nearplay", ["air", "--scenario", scenario, "--socket", airSocket, "--speed", String(speed)], ready: "air listening on")

        var sockets: [String: String] = [:]
        for (username, first, last) in [("alice", "Alice", "Archer"), ("bob", "Bob", "Builder"), ("carol", "Carol", "Cooper")] {
            // Carol only looks on: she plays nothing, so she needs no recorded inputs.
            let recordings = username == "carol" ? nil : samples + "/" + username
            let (config, socket) = try await world.makePlayer(username, firstName: first, lastName: last, lobby: lobby,
                                                              airSocket: airSocket, recordings: recordings)
            try world.start(username, "nearplay", ["agent", "--config", config], ready: nil)
            sockets[username] = socket
        }
        let state = DemoState()
        for (username, socket) in sockets {
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: socket) {
                guard Date() < deadline, world.isRunning(username) else { throw CommandFailure("\(names[username]!)'s agent did not start:\n\(world.log(of: username))") }
                try await Task.sleep(for: .milliseconds(20))
            }
            follow(username, socket: socket, state: state, narrator: narrator)
        }
        narrator.say("Lobby at \(lobby); agents for Alice, Bob and Carol on the simulated air.")

        try await DemoStory(world: world, sockets: sockets, state: state, narrator: narrator, speed: speed).run()
        narrator.say(String(format: "Done in %.1f s. Everything the demo started is stopped and removed.",
                            started.duration(to: .now).inSeconds))
    }

    /// Reads `username`'s agent events on a thread of its own for as long as the agent runs.
    private func follow(_ username: String, socket: String, state: DemoState, narrator: Narrator) {
        let json = json
        Thread.detachNewThread {
            let decoder = LobbyClient.decoder
            // Everything the agent said before we were listening comes first.
            try? AgentClient(path: socket).events(recent: AgentEventBus.historyLimit) { line in
                guard let event = try? decoder.decode(AgentEvent.self, from: Data(line.utf8)) else { return true }
                state.take(event, at: username)
                if json {
                    // handled below
                } else if username == "alice", [.playerNearby, .playerMoved, .playerGone].contains(event.kind) {
                    // Alice's view is the story: her radar, redrawn whenever it changes.
                    narrator.say(narrator.radar(state.view(of: "alice"), of: "alice"))
                    return true
                }
                if json {
                    // The agent's line with `agent` put before its first member.
                    var agent = JSONWriter(escaping: .minimal)
                    agent.string(username)
                    StandardOutput.line("{\"agent\":" + agent.text + "," + line.dropFirst())
                    StandardOutput.flush()
                } else if let text = narrator.line(for: event, at: username) {
                    narrator.say(text)
                }
                return true
            }
        }
    }

    /// `--samples`, else `Samples/rounds` in the working folder or in the checkout the binary was built in.
    private func samplesFolder(binaries: String) throws -> String {
        if let samples { return samples }
        var candidates = [FileManager.default.currentDirectoryPath + "/Samples/rounds"]
        // .build/<triple>/<configuration>/nearplay → the checkout is three folders up.
        var folder = URL(fileURLWithPath: binaries)
        for _ in 0..<4 {
            folder = folder.deletingLastPathComponent()
            candidates.append(folder.path + "/Samples/rounds")
        }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/alice/\(MinigameName.shaker).jsonl") }) else {
            throw CommandFailure("Cannot find the recorded round inputs (looked in \(candidates.joined(separator: ", "))): run the demo from the checkout or pass --samples DIR.")
        }
        return found
    }
}
