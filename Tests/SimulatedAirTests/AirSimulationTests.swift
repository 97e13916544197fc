import BeaconFrames
import Radio
import Ranging
import Testing

/// The simulated air's physics without sockets: time is a parameter, so these are exact.
@Suite struct AirSimulationTests {
    static func scenario(sigma: Double = 2, loss: Double = 0, alice: [AirScenario.Waypoint] = Fixtures.still(0),
                         beacons: [AirScenario.Beacon] = []) -> AirScenario {
        AirScenario(exponent: 2, sigma: sigma, loss: loss, seed: 7,
                    devices: ["alice": .init(waypoints: alice), "bob": .init(waypoints: Fixtures.still(0))],
                    beacons: beacons)
    }

    static func run(_ simulation: inout AirSimulation, until time: Double, step: Double = 0.05) -> [AirSimulation.Delivery] {
        var deliveries: [AirSimulation.Delivery] = []
        var t = simulation.now
        while t < time {
            t = min(time, t + step)
            simulation.advance(to: t) { deliveries.append($0) }
        }
        return deliveries
    }

    @Test func followsTheLogDistanceModelWithTheFramesOwnMeasuredPower() throws {
        var simulation = AirSimulation(scenario: Self.scenario(sigma: 0, alice: Fixtures.still(10)))
        let bobListener = simulation.startListening(device: "bob")
        let bob = try #require(bobListener)
        let data = IBeacon(uuid: Fixtures.uuid, major: 1, minor: 1, measuredPower: -65).advertisingData(includeFlags: false)
        _ = simulation.startAdvertising(device: "alice", data: data, interval: 0.1)
        let deliveries = Self.run(&simulation, until: 2)
        #expect(deliveries.count >= 18 && deliveries.count <= 20, "every 100–110 ms for 2 s: \(deliveries.count)")
        // −65 − 10·2·log10(10) = −85.
        #expect(deliveries.allSatisfy { $0.rssi == -85 && $0.listener == bob && $0.data == data })
        #expect(deliveries.allSatisfy { $0.address == SimulatedAir.address(of: "alice") })
        let gaps = zip(deliveries, deliveries.dropFirst()).map { $1.time - $0.time }
        #expect(gaps.allSatisfy { $0 >= 0.1 && $0 <= 0.11 + 1e-9 }, "interval plus 0–10 ms: \(gaps)")
    }

    @Test func assumesMinus59ForFramesWithoutMeasuredPowerAndAppliesOffsets() throws {
        var scenario = Self.scenario(sigma: 0, alice: Fixtures.still(1))
        scenario.devices["alice"]!.txOffset = 3
        scenario.devices["bob"]!.rxOffset = -5
        var simulation = AirSimulation(scenario: scenario)
        _ = simulation.startListening(device: "bob")
        _ = simulation.startAdvertising(device: "alice", data: [0x03, 0x09, 0x41, 0x42], interval: 0.1)
        let deliveries = Self.run(&simulation, until: 1)
        #expect(!deliveries.isEmpty)
        #expect(deliveries.allSatisfy { $0.rssi == -59 + 3 - 5 })
    }

    @Test func neverDeliversADevicesOwnFrames() throws {
        var simulation = AirSimulation(scenario: Self.scenario())
        let aliceListener = simulation.startListening(device: "alice")
        let alice = try #require(aliceListener)
        let bobListener = simulation.startListening(device: "bob")
        let bob = try #require(bobListener)
        _ = simulation.startAdvertising(device: "alice", data: Fixtures.iBeacon(minor: 1).advertisingData(includeFlags: false), interval: 0.1)
        let deliveries = Self.run(&simulation, until: 3)
        #expect(!deliveries.isEmpty)
        #expect(deliveries.allSatisfy { $0.listener == bob })
        #expect(!deliveries.contains { $0.listener == alice })
    }

    @Test func losesAboutTheScenariosShareOfPackets() {
        let beacon = AirScenario.Beacon(name: "b", frame: Fixtures.iBeacon(minor: 1), interval: 0.1, waypoints: Fixtures.still(1))
        func count(loss: Double) -> Int {
            var simulation = AirSimulation(scenario: Self.scenario(loss: loss, beacons: [beacon]))
            _ = simulation.startListening(device: "bob")
            return Self.run(&simulation, until: 1000, step: 1).count
        }
        let sent = count(loss: 0)
        let received = count(loss: 0.25)
        #expect(sent > 9_000)
        #expect(abs(Double(received) / Double(sent) - 0.75) < 0.02, "\(received) of \(sent)")
    }

    @Test func dropsFramesUnderTheSensitivity() {
        // −59 − 20·log10(200) ≈ −105 dBm: never heard.
        let beacon = AirScenario.Beacon(name: "far", frame: Fixtures.iBeacon(minor: 1), waypoints: Fixtures.still(200))
        var simulation = AirSimulation(scenario: Self.scenario(sigma: 0, beacons: [beacon]))
        _ = simulation.startListening(device: "bob")
        #expect(Self.run(&simulation, until: 5).isEmpty)
    }

    @Test func rssiFallsAsADeviceWalksAwayAndRangingFollows() throws {
        // Alice walks from 1 m to 21 m over 20 s.
        let walk: [AirScenario.Waypoint] = [.init(time: 0, x: 1, y: 0), .init(time: 20, x: 21, y: 0)]
        var simulation = AirSimulation(scenario: Self.scenario(sigma: 2, alice: walk))
        _ = simulation.startListening(device: "bob")
        _ = simulation.startAdvertising(device: "alice", data: Fixtures.iBeacon(minor: 1).advertisingData(includeFlags: false), interval: 0.1)
        let deliveries = Self.run(&simulation, until: 20)
        let model = DistanceModel.logDistance(exponent: 2)
        for (start, truth) in [(0.0, 2.0), (9.0, 11.0), (18.0, 20.0)] {
            let window = deliveries.filter { $0.time >= start && $0.time < start + 2 }.map { Double($0.rssi) }
            let mean = window.reduce(0, +) / Double(window.count)
            let distance = try #require(model.distance(rssi: mean, measuredPower: -59))
            #expect(abs(distance - truth) / truth < 0.3, "around \(truth) m: mean \(mean) dBm → \(distance) m")
        }
    }

    @Test func repeatsExactlyForTheSameSeed() {
        func run() -> [AirSimulation.Delivery] {
            var simulation = AirSimulation(scenario: Self.scenario(loss: 0.1))
            _ = simulation.startListening(device: "bob")
            _ = simulation.startAdvertising(device: "alice", data: [2, 1, 6], interval: 0.05)
            return Self.run(&simulation, until: 5)
        }
        #expect(run() == run())
    }

    @Test func refusesDevicesTheScenarioDoesNotHave() {
        var simulation = AirSimulation(scenario: Self.scenario())
        #expect(simulation.startListening(device: "carol") == nil)
        #expect(simulation.startAdvertising(device: "carol", data: [], interval: 0.1) == nil)
    }
}
