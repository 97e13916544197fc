import Agent
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// Calibration from location beacons, end to end: six `nearplay beacon` processes, placed by
/// their owner at known spots of a hall on the simulated air (exponent 2.2, which nobody told
/// anyone; radios up to 5 dB off), hear each other and report it; the lobby solves the hall's
/// exponent at the distances between them and publishes it to each location; a player's agent
/// near them then ranges with it, and reads its distance to the nearest beacon right where the
/// default exponent (2.8) read it a quarter short.
@Suite(.serialized) struct BeaconCalibrationAgentTests {
    static let beacons: [(name: String, x: Double, y: Double, transmit: Double, receive: Double)] = [
        ("b0", 0, 0, 5, -3), ("b1", 12, 0, -4, 5), ("b2", 12, 8, 2, 2), ("b3", 0, 8, -5, -4), ("b4", 4, 3, 0, 0),
        ("b5", 6, 8, 3, -2),
    ]
    static let exponent = 2.2
    /// Alice stands 4 m from b4, her nearest beacon.
    static let alice = (x: 8.0, y: 3.0)
    static let truth = 4.0

    static var scenario: String {
        stillAirScenario(exponent: exponent, seed: 5, beacons.map { StillDevice(name: $0.name, x: $0.x, y: $0.y, transmit: $0.transmit, receive: $0.receive) }
            + [StillDevice(name: "alice", x: alice.x, y: alice.y)])
    }

    @Test(.timeLimit(.minutes(5))) func beaconsThatHearEachOtherCalibrateTheHallForThePlayersInIt() async throws {
        let folder = try TemporaryFolder()
        // Solves every 2 s, an exchange per pair each second; identities rotate every 6 s, so
        // alice's agent resolves the locations again (with their new profile) within seconds.
        let lobby = try await blocking {
            try LobbyProcess(folder: folder.path, extraArguments: ["--crowd-calibration-interval", "2", "--crowd-exchange-spacing", "1",
                                                                   "--rotation-period", "6", "--locations-per-day", "10"])
        }
        defer { lobby.kill() }
        let owner = try await register("operator", at: lobby.url)
        let alice = try await register("alice", at: lobby.url)
        let airSocket = folder.path + "/air/air.sock"
        let scenario = folder.path + "/scenario.json"
        try Self.scenario.write(toFile: scenario, atomically: true, encoding: .utf8)
        let hub = try ChildProcess(try builtExecutable("nearplay"), ["air", "--scenario", scenario, "--socket", airSocket],
                                   log: folder.path + "/air.log")
        defer { hub.kill() }
        _ = await eventually(timeout: 20) { FileManager.default.fileExists(atPath: airSocket) }

        let credentials = folder.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try owner.credentials.save(to: credentials + "/credentials.json")
        let environment = ["CREDENTIALS_DIRECTORY": credentials, "STATE_DIRECTORY": folder.path + "/beacon-state"]
        var devices: [String: ChildProcess] = [:]
        defer { for device in devices.values { device.kill() } }
        func start(_ beacon: (name: String, x: Double, y: Double, transmit: Double, receive: Double)) throws {
            devices[beacon.name] = try ChildProcess(try builtExecutable("nearplay"), [
                "beacon", "--location", "Hall \(beacon.name)", "--site", "Hall", "--position", "\(beacon.x),\(beacon.y)",
                "--hearing-interval", "1", "--backend", "sim", "--air-socket", airSocket, "--device", beacon.name,
            ], log: folder.path + "/\(beacon.name).log", environment: environment)
        }
        // b4 first, alone: one placed beacon hears no other, so nothing is solved while alice
        // takes her uncalibrated reading of it.
        try start(Self.beacons[4])
        let agent = try RunningAgent.start(alice, in: folder.path, radio: ["backend": "sim", "air_socket": airSocket, "device": "alice"])
        defer { agent.process.kill() }
        #expect(await agent.waitUntilAnswering(), "alice's agent did not start: \(agent.process.output)")

        // Alice's first reading of b4, with the default exponent: 4 m reads about 3 (2.2/2.8 in the exponent).
        func hallB4() async -> NearbyLocation? {
            (try? LobbyClient.decoder.decode([NearbyLocation].self, from: try await agent.send(.locations)))?.first { $0.name == "Hall b4" }
        }
        /// The median of what alice shows for b4 over `seconds`, sampled twice a second.
        func median(over seconds: Int) async throws -> Double? {
            var readings: [Double] = []
            for _ in 0..<(2 * seconds) {
                if let metres = await hallB4()?.distance { readings.append(metres) }
                try await Task.sleep(for: .milliseconds(500))
            }
            return readings.isEmpty ? nil : readings.sorted()[readings.count / 2]
        }
        _ = await eventually(timeout: 60) { await hallB4()?.distance != nil }
        let uncalibrated = try #require(try await median(over: 4), "alice never saw Hall b4: \(agent.process.output) \(devices["b4"]?.output ?? "")")
        let beforeStatus = try await agent.status()
        #expect(beforeStatus.rangingSite == nil && beforeStatus.distanceModel == "log-distance(n=2.8)", "\(beforeStatus)")
        for beacon in Self.beacons where beacon.name != "b4" { try start(beacon) }

        // The lobby publishes the hall's exponent, from the beacons, to every one of them.
        // Each device remembers the location it registered, with its id.
        var ids: [String: Int64] = [:]
        _ = await eventually(timeout: 30) {
            for beacon in Self.beacons {
                let file = LocationBeaconDevice.stateFile(folder.path + "/beacon-state", name: "Hall \(beacon.name)")
                if let data = FileManager.default.contents(atPath: file), let marked = try? JSONDecoder().decode(MarkedLocation.self, from: data) {
                    ids[beacon.name] = marked.id
                }
            }
            return ids.count == Self.beacons.count
        }
        var profiles: [String: LocationCrowdProfile] = [:]
        var placed: [String: LobbyLocationPosition] = [:]
        let published = await eventually(timeout: 90) {
            for beacon in Self.beacons {
                // The owner sees where its beacons stand; alice would not.
                guard let id = ids[beacon.name], let location = try? await owner.client.location(id) else { continue }
                placed[beacon.name] = location.position
                if let profile = location.crowdProfile, profile.source == .beacons, profile.pairs == 15 { profiles[beacon.name] = profile }
            }
            return profiles.count == Self.beacons.count
        }
        for beacon in Self.beacons {
            #expect(placed[beacon.name].map { $0.site == "Hall" && $0.x == beacon.x && $0.y == beacon.y } == true,
                    "\(beacon.name) placed at \(String(describing: placed[beacon.name]))")
        }
        #expect(published, "published to \(profiles.keys.sorted()) only: \(lobby.child?.output ?? "") \(devices.values.map(\.output))")
        for (name, profile) in profiles {
            #expect(abs(profile.exponent - Self.exponent) < 0.3, "\(name): \(profile)")
            #expect(profile.exponentError <= 0.3, "\(name): \(profile)")
        }

        // Alice's agent ranges with it near the hall, and reads b4 within 15 % of the 4 m.
        var status = try await agent.status()
        let ranging = await eventually(timeout: 60) {
            status = (try? await agent.status()) ?? status
            guard let model = status.distanceModel, let n = model.firstMatch(of: /n=([0-9.]+)/).flatMap({ Double($0.1) }) else { return false }
            return status.rangingSite?.hasPrefix("Hall ") == true && abs(n - Self.exponent) < 0.3
        }
        #expect(ranging, "\(status)")
        let after = try await median(over: 4)
        #expect(after.map { abs($0 - Self.truth) < 0.15 * Self.truth } == true,
                "Hall b4 read \(String(describing: after)) m with the hall's exponent (\(status)), truly \(Self.truth) m")
        #expect(uncalibrated < 0.85 * Self.truth, "with the default exponent Hall b4 read \(uncalibrated) m (truly \(Self.truth) m), so the test could not tell")
    }
}
