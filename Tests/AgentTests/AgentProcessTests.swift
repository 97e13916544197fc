import Agent
import BeaconFrames
import Foundation
import LobbyClient
import Testing

/// The built `nearplay agent` as a user runs it, against a live lobby.
@Suite(.serialized) struct AgentProcessTests {
    /// Writes an agent's configuration, credentials and folders under `folder/name`.
    static func prepareAgent(_ player: TestPlayer, in folder: String, radio: [String: Any], extra: [String: Any] = [:]) throws -> (config: String, socket: String) {
        let home = folder + "/" + player.username
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try player.credentials.save(to: home + "/credentials.json")
        let socket = home + "/run/agent.sock"
        var object: [String: Any] = ["radio": radio, "state_directory": home + "/state", "socket": socket,
                                     "credentials": home + "/credentials.json", "notifications": false]
        for (key, value) in extra { object[key] = value }
        let config = home + "/agent.json"
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: config))
        return (config, socket)
    }

    /// A trace of `beacon` heard at `rssi` dBm, 10 times a second for `seconds`.
    static func trace(of beacon: PlayerBeacon, rssi: Int, from start: Double, seconds: Double, path: String) throws {
        guard case let .iBeacon(uuid, major, minor)? = beacon.beaconIdentity else { throw AgentError("not an iBeacon") }
        let frame = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59)
        let ad = AdvertisingPayloadBytes.iBeacon(frame)
        // A frame that is no beacon at 0 s, so a replay starts its clock there and the beacon
        // arrives `start` seconds later.
        var lines = ["{\"nearplay_trace\":1,\"created\":\"2026-11-23T00:00:00Z\",\"source\":\"test\"}",
                     "{\"t\":0.000,\"addr\":\"C0:FF:EE:00:00:09\",\"rssi\":-80,\"ad\":\"020106\"}"]
        var t = start
        while t < start + seconds {
            lines.append(String(format: "{\"t\":%.3f,\"addr\":\"C0:FF:EE:00:00:02\",\"rssi\":%d,", t, rssi) + "\"ad\":\"\(ad)\"}")
            t += 0.1
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test(.timeLimit(.minutes(3))) func recognisesAPlayerFromTheRadioAndAnswersTheCLI() async throws {
        let folder = try TemporaryFolder()
        let lobby = try LobbyProcess(folder: folder.path)
        defer { lobby.stop() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        let tracePath = folder.path + "/bob.jsonl"
        try Self.trace(of: bob.beacon, rssi: -65, from: 3, seconds: 30, path: tracePath)
        let (config, socket) = try Self.prepareAgent(alice, in: folder.path, radio: ["backend": "replay", "file": tracePath])
        let agent = try ChildProcess(try builtExecutable("nearplay"), ["agent", "--config", config], log: folder.path + "/alice.log")
        defer { agent.stop(signal: SIGKILL) }
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) }, "the agent never opened its socket: \(agent.output)")

        // Bob's frames start 3 s into the replay: the event stream is open by then.
        let nearby = try await blocking {
            var nearby: AgentEvent?
            let deadline = Date().addingTimeInterval(30)
            try AgentClient(path: socket).events(idleTimeout: 30) { line in
                if let event = try? JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)), event.kind == .playerNearby { nearby = event }
                return nearby == nil && Date() < deadline
            }
            return nearby
        }
        let seen = try #require(nearby, "no player_nearby event: \(agent.output)")
        #expect(seen.player == "bob")
        #expect(seen.name == "Bob Tester")
        #expect(seen.beacon == bob.beacon.beaconIdentity?.description)
        let distance = try #require(seen.distance)
        #expect(distance > 0.5 && distance < 10)

        let answer = try await blocking { try AgentClient(path: socket).send(.nearby) }
        let players = try LobbyClient.decoder.decode([NearbyPlayer].self, from: answer)
        #expect(players.map(\.username) == ["bob"])
        #expect(players.first?.unlocked == false)

        // Through the CLI, as a user types it.
        let cli = try ChildProcess(try builtExecutable("nearplay"), ["nearby", "--socket", socket], log: folder.path + "/cli.log")
        try await blocking { cli.process.waitUntilExit() }
        #expect(cli.process.terminationStatus == 0)
        #expect(cli.output.contains("bob") && cli.output.contains("Bob Tester"))

        // SIGTERM: a clean stop, status 0, the socket removed.
        #expect(agent.stop(signal: SIGTERM) == 0, "\(agent.output)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

enum AdvertisingPayloadBytes {
    /// Flags, then the iBeacon manufacturer data, as hex.
    static func iBeacon(_ frame: IBeacon) -> String {
        let manufacturer: [UInt8] = [0x4C, 0x00] + frame.manufacturerData
        let bytes: [UInt8] = [0x02, 0x01, 0x06, UInt8(manufacturer.count + 1), 0xFF] + manufacturer
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}
