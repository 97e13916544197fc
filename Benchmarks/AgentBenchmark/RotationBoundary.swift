import Agent
import BeaconKeys
import Foundation
import LobbyClient
import Radio

/// What an agent pays when identities roll over (issue 22): a lobby with a short period, a hub
/// with the agent's device and `players` other players' devices (1–10 m away), those players
/// advertising their rotating identities from this process, and a `nearplay agent` child scanning
/// and advertising its own. Its CPU is sampled every `step` seconds over `window`; the samples in
/// the `after` seconds following each period boundary (its own identity and every neighbour's
/// change, each new one resolved at the lobby) are told from the rest.
struct RotationBoundary {
    var folder: String
    var nearplay: String
    var lobbyExecutable: String
    var period = 10
    var players = 20
    var window = 60.0
    var step = 0.5
    var after = 2.0

    struct Result {
        var boundaryPercent: Double
        var betweenPercent: Double
        var boundaries: Int
        var nearbyAtEnd: Int
        var rotations: Int
    }

    func run() async throws -> Result {
        let run = folder + "/boundary"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let port = try freePort()
        let lobby = try ChildProcess(lobbyExecutable, ["serve", "--port", String(port), "--bcrypt-cost", "4", "--sign-in-throttle", "off",
                                                       "--rotation-period", String(period), "--db", run + "/lobby.sqlite"], log: run + "/lobby.log")
        defer { lobby.stop() }
        guard lobby.waitFor("lobby listening on") else { throw BenchFailure("the lobby did not start: \(lobby.output)") }
        let url = "http://127.0.0.1:\(port)"
        let me = try await register("watcher", at: url)
        var others: [BenchPlayer] = []
        for index in 1...players { others.append(try await register(String(format: "rolling%03d", index), at: url)) }

        var devices = [#""watcher": {"waypoints": [[0, 0, 0]]}"#]
        for (index, player) in others.enumerated() {
            let angle = 2 * Double.pi * Double(index) / Double(players), radius = 1 + 9 * Double(index) / Double(max(1, players - 1))
            devices.append(#""\#(player.username)": {"waypoints": [[0, \#(radius * cos(angle)), \#(radius * sin(angle))]]}"#)
        }
        let scenario = run + "/scenario.json"
        try #"{"sigma": 2, "devices": {\#(devices.joined(separator: ", "))}}"#.write(toFile: scenario, atomically: true, encoding: .utf8)
        let airSocket = run + "/air.sock"
        let hub = try ChildProcess(nearplay, ["air", "--scenario", scenario, "--socket", airSocket], log: run + "/air.log")
        defer { hub.stop() }
        guard hub.waitFor("air listening on") else { throw BenchFailure("the air hub did not start: \(hub.output)") }

        // The neighbours: each advertises its rotating identity from a new address every period.
        var advertisers: [Task<Void, Never>] = []
        for player in others {
            guard let key = RotationKey(try await player.client.beaconKey()) else { throw BenchFailure("no beacon key for \(player.username)") }
            let advertiser = SimulatedAirAdvertiser(socketPath: airSocket, device: player.username)
            let payloads = key.beacon(.player).payloads()
            advertisers.append(Task { try? await advertiser.advertise(rotating: payloads) })
        }
        defer { for task in advertisers { task.cancel() } }

        let credentials = run + "/credentials.json"
        try me.credentials.save(to: credentials)
        let socket = run + "/agent.sock"
        let config: [String: Any] = [
            "radio": ["backend": "sim", "air_socket": airSocket, "device": "watcher"],
            "state_directory": run + "/state", "socket": socket, "credentials": credentials, "notifications": false,
        ]
        let configPath = run + "/agent.json"
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let agent = try ChildProcess(nearplay, ["agent", "--config", configPath], log: run + "/agent.log")
        defer { agent.stop() }
        guard agent.waitUntil(timeout: 30, { FileManager.default.fileExists(atPath: socket) }) else {
            throw BenchFailure("the agent never opened its socket: \(agent.output)")
        }
        // Warm up: everyone recognised once, then start at a boundary.
        try await Task.sleep(for: .seconds(Double(period) * 1.5))
        let rotation = RotationPeriod(seconds: period)!
        let next = rotation.end(of: rotation.index(at: Date()))
        try await Task.sleep(for: .seconds(max(0, next.timeIntervalSinceNow + 0.05)))

        var boundary: (cpu: Double, wall: Double) = (0, 0), between: (cpu: Double, wall: Double) = (0, 0)
        var boundaries = Set<Int64>()
        let start = Date()
        guard var cpu = cpuSeconds(of: agent.pid) else { throw BenchFailure("the agent stopped: \(agent.output)") }
        var time = Date()
        while Date().timeIntervalSince(start) < window {
            try await Task.sleep(for: .seconds(step))
            guard let now = cpuSeconds(of: agent.pid) else { throw BenchFailure("the agent stopped: \(agent.output)") }
            let wall = Date().timeIntervalSince(time)
            // Where the sample's start lies in its period.
            let index = rotation.index(at: time)
            let sinceBoundary = time.timeIntervalSince(rotation.start(of: index))
            if sinceBoundary < after {
                boundary.cpu += now - cpu
                boundary.wall += wall
                boundaries.insert(index)
            } else {
                between.cpu += now - cpu
                between.wall += wall
            }
            (cpu, time) = (now, Date())
        }
        let nearby = (try? JSONSerialization.jsonObject(with: try await AgentClient(path: socket).request(.nearby)) as? [[String: Any]])?.count ?? 0
        let metrics = (try? JSONDecoder().decode(String.self, from: try await AgentClient(path: socket).request(.metrics))) ?? ""
        let rotations = metrics.split(separator: "\n").first { $0.hasPrefix("nearplay_agent_identity_rotations_total") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? 0
        return Result(boundaryPercent: 100 * boundary.cpu / max(boundary.wall, 0.001), betweenPercent: 100 * between.cpu / max(between.wall, 0.001),
                      boundaries: boundaries.count, nearbyAtEnd: nearby, rotations: rotations)
    }
}
