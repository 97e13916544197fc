import BeaconFrames
import Foundation
import Radio
import Ranging
import Testing

/// Hub, advertisers and scanners over a real Unix socket in a temporary folder.
@Suite(.timeLimit(.minutes(5))) struct SimulatedAirHubTests {
    static func scenario(sigma: Double = 2, loss: Double = 0, alice: [AirScenario.Waypoint] = Fixtures.still(2),
                         beacons: [AirScenario.Beacon] = []) -> AirScenario {
        AirScenario(exponent: 2, sigma: sigma, loss: loss, seed: 3,
                    devices: ["alice": .init(waypoints: alice), "bob": .init(waypoints: Fixtures.still(0))],
                    beacons: beacons, source: "test-room.json")
    }

    static func manualHub(_ scenario: AirScenario) throws -> (RunningHub<ManualClock>, ManualClock) {
        let clock = ManualClock()
        let hub = try SimulatedAirHub(scenario: scenario, socketPath: temporarySocketPath(), clock: clock)
        return (RunningHub(hub), clock)
    }

    static let alice = SimulatedAir.address(of: "alice")
    static let bob = SimulatedAir.address(of: "bob")

    @Test func rssiFallsAsADeviceWalksAwayAndRangingFollows() async throws {
        let walk: [AirScenario.Waypoint] = [.init(time: 0, x: 1, y: 0), .init(time: 10, x: 11, y: 0)]
        let (running, clock) = try Self.manualHub(Self.scenario(alice: walk))
        let probe = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        let advertiser = AdvertiserTask(SimulatedAirAdvertiser(socketPath: running.socketPath, device: "alice"), Fixtures.payload(minor: 1))
        #expect(await running.waitFor(scanning: 1, advertising: 1))
        await clock.run(for: .seconds(10), step: .milliseconds(100))
        // Scan times start at the real time the hub's welcome arrived (late on a loaded
        // machine): the windows are measured from alice's first frame, at the walk's start.
        func fromStart(_ frame: Advertisement) -> Double? {
            probe.all.first { $0.address == Self.alice }.map { frame.time - $0.time }
        }
        // The last frames are on their way through the socket.
        _ = await probe.first { frame in frame.address == Self.alice && (fromStart(frame) ?? 0) >= 9.4 }
        let heard = probe.all.filter { $0.address == Self.alice }
        #expect(heard.count > 80, "about one frame per 105 ms for 10 s: \(heard.count)")
        let model = DistanceModel.logDistance(exponent: 2)
        var distances: [Double] = []
        for start in [0.0, 4.5, 8.5] {
            let window = heard.filter { fromStart($0)! >= start && fromStart($0)! < start + 1.5 }.compactMap(\.rssi).map(Double.init)
            // About 14 frames; a loaded machine can make the hub skip overdue ones (seen: 8).
            try #require(window.count > 4)
            let mean = window.reduce(0, +) / Double(window.count)
            distances.append(try #require(model.distance(rssi: mean, measuredPower: -59)))
        }
        // Truth: about 1.75 m, 6.25 m and 10.25 m.
        #expect(distances[0] < 3 && distances[1] > 4 && distances[1] < 9 && distances[2] > 7.5, "\(distances)")
        #expect(distances == distances.sorted())
        #expect(heard.allSatisfy { $0.addressType == .random })
        #expect(heard.map(\.time) == heard.map(\.time).sorted())
        try await advertiser.stop()
        await probe.stop()
        await running.stop()
    }

    @Test func losesAboutTheScenariosShare() async throws {
        let beacon = AirScenario.Beacon(name: "b", frame: Fixtures.iBeacon(minor: 5), interval: 0.1, waypoints: Fixtures.still(1))
        let (running, clock) = try Self.manualHub(Self.scenario(loss: 0.3, beacons: [beacon]))
        let probe = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        #expect(await running.waitFor(scanning: 1))
        await clock.run(for: .seconds(40), step: .milliseconds(200))
        let sent = running.hub.census.framesDelivered
        _ = await probe.first { _ in probe.all.count >= sent }
        // Every 100 ms plus 0–10 ms: about 381 transmissions in 40 s, 30 % of them lost.
        let share = Double(probe.all.count) / (40 / 0.105)
        #expect(abs(share - 0.7) < 0.08, "\(probe.all.count) frames heard, \(share) of those sent")
        await probe.stop()
        await running.stop()
    }

    @Test func neverDeliversADevicesOwnFramesAndStopsWhenItWithdraws() async throws {
        let (running, clock) = try Self.manualHub(Self.scenario())
        let aliceHears = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "alice"))
        let bobHears = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        let aliceSends = AdvertiserTask(SimulatedAirAdvertiser(socketPath: running.socketPath, device: "alice"), Fixtures.payload(minor: 1))
        let bobSends = AdvertiserTask(SimulatedAirAdvertiser(socketPath: running.socketPath, device: "bob"), Fixtures.payload(minor: 2))
        #expect(await running.waitFor(scanning: 2, advertising: 2))
        await clock.run(for: .seconds(3), step: .milliseconds(100))
        #expect(await aliceHears.first { $0.address == Self.bob } != nil)
        #expect(await bobHears.first { $0.address == Self.alice } != nil)
        #expect(!aliceHears.all.contains { $0.address == Self.alice })
        #expect(!bobHears.all.contains { $0.address == Self.bob })

        try await aliceSends.stop()
        let deadline = ContinuousClock.now + .seconds(60)
        while running.hub.census.advertising > 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(running.hub.census.advertising == 1)
        // Frames sent before the withdrawal may still be on their way: a scanner hands what it
        // read over once per read beat (50 ms).
        try await Task.sleep(for: .milliseconds(200))
        let before = bobHears.all.count
        await clock.run(for: .seconds(2), step: .milliseconds(100))
        try await Task.sleep(for: .milliseconds(100))
        #expect(!bobHears.all.dropFirst(before).contains { $0.address == Self.alice }, "alice withdrew")
        try await bobSends.stop()
        await aliceHears.stop()
        await bobHears.stop()
        await running.stop()
    }

    @Test func refusesAnUnknownDeviceWithAMessage() async throws {
        let (running, _) = try Self.manualHub(Self.scenario())
        let probe = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "carol"))
        #expect(await probe.end())
        let error = try #require(probe.error as? RadioError)
        #expect(error.code == .simulatedAirRefused)
        #expect(error.message.contains("“carol”") && error.message.contains("alice, bob") && error.message.contains("test-room.json"),
                "\(error.message)")
        let advertising = await AdvertiserTask(SimulatedAirAdvertiser(socketPath: running.socketPath, device: "carol"),
                                               Fixtures.payload(minor: 1)).result
        #expect(throws: RadioError.self) { try advertising.get() }
        await running.stop()
    }

    @Test func aScannerStartedBeforeTheHubHearsOnceItStartsAndAfterItRestarts() async throws {
        let path = temporarySocketPath()
        let beacon = AirScenario.Beacon(name: "door", frame: Fixtures.iBeacon(minor: 9), interval: 0.05, waypoints: Fixtures.still(1))
        let scenario = Self.scenario(beacons: [beacon])
        let probe = AirProbe(SimulatedAirScanner(socketPath: path, device: "bob"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(probe.all.isEmpty && probe.error == nil)

        var running = RunningHub(try SimulatedAirHub(scenario: scenario, socketPath: path))
        #expect(await probe.first(within: .seconds(60)) { _ in true } != nil)
        await running.stop()
        #expect(!FileManager.default.fileExists(atPath: path), "the hub removes its socket")

        let count = probe.all.count
        let lastTime = probe.all.last!.time
        running = RunningHub(try SimulatedAirHub(scenario: scenario, socketPath: path))
        let again = await probe.first(within: .seconds(60)) { _ in probe.all.count > count + 3 }
        #expect(again != nil, "heard again after the hub restarted")
        #expect(probe.all.dropFirst(count).allSatisfy { $0.time >= lastTime }, "times go on from where they were")
        await probe.stop()
        #expect(probe.error == nil)
        await running.stop()
    }

    @Test func cancellingEndsAScanPromptly() async throws {
        let beacon = AirScenario.Beacon(name: "door", frame: Fixtures.iBeacon(minor: 9), interval: 0.02, waypoints: Fixtures.still(1))
        let running = RunningHub(try SimulatedAirHub(scenario: Self.scenario(beacons: [beacon]), socketPath: temporarySocketPath()))
        let connected = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        #expect(await connected.first { _ in true } != nil)
        var start = ContinuousClock.now
        await connected.stop()
        // About 0.1 s when idle (0.65 s seen on a loaded 2-core machine); a scan deaf to
        // cancellation would go on as long as the hub sends.
        #expect(start.duration(to: .now) < .seconds(20), "a connected scan ends at once")

        let waiting = AirProbe(SimulatedAirScanner(socketPath: "/tmp/npair-none/air.sock", device: "bob"))
        try await Task.sleep(for: .milliseconds(300))
        start = ContinuousClock.now
        await waiting.stop()
        // Its wait between attempts is a cancellable sleep (BackoffTests); here it just ends.
        #expect(start.duration(to: .now) < .seconds(20), "a scan waiting for the hub ends")

        let advertiser = AdvertiserTask(SimulatedAirAdvertiser(socketPath: running.socketPath, device: "alice"), Fixtures.payload(minor: 1))
        #expect(await running.waitFor(advertising: 1))
        start = ContinuousClock.now
        try await advertiser.stop()
        #expect(start.duration(to: .now) < .seconds(20), "advertising ends at once")
        await running.stop()
    }

    @Test func staticAndGeneratedBeaconsAreHeard() async throws {
        let json = """
            {"sigma": 1, "devices": {"bob": {"waypoints": [[0, 0, 0]]}},
             "beacons": [{"name": "door", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2,
                          "measuredPower": -61, "waypoints": [[0, 2, 0]], "address": "C0:FF:EE:00:00:01"},
                         {"generate": 20, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 9, "ring": [1, 5]}]}
            """
        let scenario = try AirScenario(json: Data(json.utf8), source: "beacons.json")
        let (running, clock) = try Self.manualHub(scenario)
        let probe = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        #expect(await running.waitFor(scanning: 1))
        await clock.run(for: .seconds(2), step: .milliseconds(100))
        _ = await probe.first { _ in Set(probe.all.compactMap { Sighting($0)?.identity }).count == 21 }
        let identities = Set(probe.all.compactMap { Sighting($0)?.identity.description })
        #expect(identities.count == 21)
        #expect(identities.contains("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2"))
        #expect((1...20).allSatisfy { identities.contains("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/9/\($0)") })
        let door = probe.all.filter { $0.address == BluetoothAddress("C0:FF:EE:00:00:01")! }
        #expect(!door.isEmpty)
        // −61 − 20·log10(2) ≈ −67, σ = 1.
        let mean = Double(door.compactMap(\.rssi).reduce(0, +)) / Double(door.count)
        #expect(abs(mean - -67) < 1.5, "\(mean)")
        await probe.stop()
        await running.stop()
    }

    @Test func refusesToShareASocketWithALiveHub() async throws {
        let running = RunningHub(try SimulatedAirHub(scenario: Self.scenario(), socketPath: temporarySocketPath()))
        #expect(throws: SocketError.self) { try SimulatedAirHub(scenario: Self.scenario(), socketPath: running.socketPath) }
        await running.stop()
    }
}

@Suite struct SimulatedAirClientErrorTests {
    @Test func saysAtOnceWhenTheSocketPathCannotWork() async throws {
        let tooLong = "/tmp/" + String(repeating: "x", count: 120) + "/air.sock"
        let probe = AirProbe(SimulatedAirScanner(socketPath: tooLong, device: "bob"))
        #expect(await probe.end(within: .seconds(30)))
        let error = try #require(probe.error as? RadioError)
        #expect(error.code == .simulatedAirUnusable)
        #expect(error.message.contains("choose a shorter one"), "\(error.message)")
    }
}
