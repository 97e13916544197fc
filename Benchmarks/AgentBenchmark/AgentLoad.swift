import Agent
import Foundation
import GRDB

/// What one agent process cost over a sampling window.
struct AgentLoad {
    /// Per cent of one core (utime + stime over wall time).
    var cpuPercent: Double
    var rssMeanMB: Double
    var rssMaxMB: Double
    /// Identities the agent's cache holds as belonging to nobody / to a player, at the end.
    var cachedNobody: Int
    var cachedPlayers: Int
    var load: Double
}

/// Paths and children of one agent-on-the-air measurement.
struct AgentRig {
    var folder: String
    var nearplay: String
    var lobbyURL: String
    var player: BenchPlayer

    /// A scenario with the agent's device at the origin and `beacons` iBeacons at 10 Hz between 1
    /// and 10 m, all of major 65000, which the lobby gives nobody (its players count up from major 1).
    static func scenario(beacons: Int) -> String {
        let generated = beacons > 0
            ? #", "beacons": [{"generate": \#(beacons), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 65000, "interval": 0.1, "ring": [1, 10]}]"#
            : ""
        return #"{"sigma": 2, "devices": {"agent": {"waypoints": [[0, 0, 0]]}}\#(generated)}"#
    }

    /// Starts a hub with `beacons` beacons and a fresh agent on it, waits `warmUp` seconds, then
    /// samples the agent's CPU (once at each end) and RSS (every second) for `window` seconds.
    func measure(beacons: Int, warmUp: Double, window: Double, label: String) async throws -> AgentLoad {
        let run = folder + "/\(label)"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let scenario = run + "/scenario.json"
        try Self.scenario(beacons: beacons).write(toFile: scenario, atomically: true, encoding: .utf8)
        let airSocket = run + "/air.sock"
        let hub = try ChildProcess(nearplay, ["air", "--scenario", scenario, "--socket", airSocket], log: run + "/air.log")
        defer { hub.stop() }
        guard hub.waitFor("air listening on") else { throw BenchFailure("the air hub did not start: \(hub.output)") }

        let credentials = run + "/credentials.json"
        try player.credentials.save(to: credentials)
        let socket = run + "/agent.sock"
        let state = run + "/state"
        let config: [String: Any] = [
            "radio": ["backend": "sim", "air_socket": airSocket, "device": "agent"],
            "state_directory": state, "socket": socket, "credentials": credentials, "notifications": false,
        ]
        let configPath = run + "/agent.json"
        try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: configPath))
        let agent = try ChildProcess(nearplay, ["agent", "--config", configPath], log: run + "/agent.log")
        defer { agent.stop() }
        guard agent.waitUntil(timeout: 30, { FileManager.default.fileExists(atPath: socket) }) else {
            throw BenchFailure("the agent never opened its socket: \(agent.output)")
        }

        try await Task.sleep(for: .seconds(warmUp))
        guard agent.process.isRunning, let cpu0 = cpuSeconds(of: agent.pid) else { throw BenchFailure("the agent stopped: \(agent.output)") }
        let clock = ContinuousClock()
        let start = clock.now
        let load0 = loadAverage()
        var rss: [Double] = []
        while start.duration(to: clock.now).seconds < window {
            try await Task.sleep(for: .seconds(1))
            if let value = residentMegabytes(of: agent.pid) { rss.append(value) }
        }
        guard let cpu1 = cpuSeconds(of: agent.pid) else { throw BenchFailure("the agent stopped: \(agent.output)") }
        let wall = start.duration(to: clock.now).seconds
        let load = (load0 + loadAverage()) / 2
        let (nobody, players) = try Self.cachedIdentities(in: state)
        return AgentLoad(cpuPercent: 100 * (cpu1 - cpu0) / wall, rssMeanMB: rss.reduce(0, +) / Double(max(1, rss.count)),
                         rssMaxMB: rss.max() ?? .nan, cachedNobody: nobody, cachedPlayers: players, load: load)
    }

    /// Counts the agent's identity cache rows, read-only (the agent keeps its file in WAL mode).
    static func cachedIdentities(in state: String) throws -> (nobody: Int, players: Int) {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: state + "/agent.sqlite", configuration: configuration)
        return try database.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM identity WHERE username IS NULL") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM identity WHERE username IS NOT NULL") ?? 0)
        }
    }
}
