import BeaconFrames
import Foundation
import Radio
import Testing

@Suite struct AirScenarioTests {
    static let example = """
        {"exponent": 2.0, "sigma": 2.0, "loss": 0.05, "seed": 1,
         "devices": {"alice": {"waypoints": [[0, 12, 0], [8, 1.5, 0]], "txOffset": 0, "rxOffset": 0},
                     "bob": {"waypoints": [[0, 0, 0]]}},
         "beacons": [
           {"name": "door", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2,
            "measuredPower": -61, "interval": 0.2, "waypoints": [[0, 3, 4]]},
           {"generate": 5, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 9, "interval": 0.1, "ring": [2, 4]}
         ]}
        """

    static func parse(_ text: String) throws(AirScenarioError) -> AirScenario {
        try AirScenario(json: Data(text.utf8), source: "room.json")
    }

    static func failure(_ text: String) -> AirScenarioError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsTheDocumentedExample() throws {
        let scenario = try Self.parse(Self.example)
        #expect(scenario.exponent == 2 && scenario.sigma == 2 && scenario.loss == 0.05 && scenario.seed == 1)
        #expect(scenario.devices.keys.sorted() == ["alice", "bob"])
        #expect(scenario.devices["alice"]?.waypoints == [.init(time: 0, x: 12, y: 0), .init(time: 8, x: 1.5, y: 0)])
        #expect(scenario.beacons.count == 6)
        let door = try #require(scenario.beacons.first)
        #expect(door.name == "door" && door.interval == 0.2 && door.frame.measuredPower == -61)
        #expect(door.frame.identity.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2")
    }

    @Test func generatesBeaconsInTheRingWithCountingMinors() throws {
        let scenario = try Self.parse(Self.example)
        let generated = scenario.beacons.dropFirst()
        #expect(generated.map(\.frame.minor) == [1, 2, 3, 4, 5])
        #expect(generated.allSatisfy { $0.frame.major == 9 && $0.interval == 0.1 && $0.frame.measuredPower == -59 })
        for beacon in generated {
            let position = beacon.waypoints.position(at: 0)
            let radius = (position.x * position.x + position.y * position.y).squareRoot()
            #expect(radius >= 2 && radius <= 4, "\(beacon.name) at \(radius) m")
        }
        #expect(try Self.parse(Self.example).beacons == scenario.beacons, "the same seed places them the same way")
    }

    @Test func interpolatesWaypointsAndHoldsTheEnds() {
        let path: [AirScenario.Waypoint] = [.init(time: 2, x: 0, y: 0), .init(time: 4, x: 10, y: 0), .init(time: 6, x: 10, y: 4)]
        #expect(path.position(at: 0) == (0, 0))
        #expect(path.position(at: 3) == (5, 0))
        #expect(path.position(at: 5) == (10, 2))
        #expect(path.position(at: 100) == (10, 4))
    }

    @Test(arguments: [
        (#"{"devices": {"alice": {"waypoints": [[0, 12, 0], [8, 1.5]]}}}"#,
         "room.json: devices.alice.waypoints[1]: expected [seconds, x, y]"),
        (#"{"devices": {"alice": {"waypoints": [[0, 1, 0], "x"]}}}"#,
         "room.json: devices.alice.waypoints[1]: expected [seconds, x, y]"),
        (#"{"devices": {"alice": {"waypoints": [[5, 1, 0], [2, 1, 0]]}}}"#,
         "room.json: devices.alice.waypoints[1]: time 2.0 comes before the previous waypoint's 5.0"),
        (#"{"devices": {"alice": {"waypoint": [[0, 1, 0]]}}}"#,
         "room.json: devices.alice.waypoint: unknown key (expected one of rxOffset, txOffset, waypoints)"),
        (#"{"devices": {"alice": {}}}"#,
         "room.json: devices.alice.waypoints: missing (expected [[seconds, x, y], …])"),
        (#"{"exponent": "two", "devices": {}}"#, "room.json: exponent: expected a number"),
        (#"{"loss": 1.5, "devices": {}}"#, "room.json: loss: 1.5 is out of range (0.0 to 1.0)"),
        (#"{}"#, "room.json: devices: missing (expected an object of device names)"),
        (#"{"devices": {}, "beacons": [{"uuid": "nope", "major": 1, "minor": 1, "waypoints": [[0, 0, 0]]}]}"#,
         "room.json: beacons[0].uuid: expected a UUID such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"),
        (#"{"devices": {}, "beacons": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 70000, "minor": 1, "waypoints": [[0, 0, 0]]}]}"#,
         "room.json: beacons[0].major: expected a whole number from 0 to 65535"),
        (#"{"devices": {}, "beacons": [{"generate": 3, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "ring": [5]}]}"#,
         "room.json: beacons[0].ring: expected [minMetres, maxMetres]"),
        (#"{"devices": {}, "beacons": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "interval": 0.001, "waypoints": [[0, 0, 0]]}]}"#,
         "room.json: beacons[0].interval: 0.001 is out of range (0.02 to 10.24)"),
        (#"{"devices": {"alice": {"waypoints": [[0, 0, 0]]}}, "beacons": [{"name": "alice", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "waypoints": [[0, 0, 0]]}]}"#,
         "room.json: beacons[0]: the name “alice” is already taken by another beacon or device"),
    ])
    func namesTheFileAndTheFieldOfEachMistake(json: String, message: String) {
        #expect(Self.failure(json)?.description == message)
    }

    @Test func namesTheFileWhenItIsNotJSONOrMissing() {
        #expect(Self.failure("{\"devices\": ")?.description.hasPrefix("room.json: not valid JSON") == true)
        #expect(throws: AirScenarioError.self) { try AirScenario.load(contentsOf: "/nonexistent/room.json") }
        do {
            _ = try AirScenario.load(contentsOf: "/nonexistent/room.json")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/room.json: cannot read the scenario"))
        }
    }

    @Test func givesEachNameAStableRandomStaticAddress() {
        let alice = SimulatedAir.address(of: "alice")
        #expect(alice == SimulatedAir.address(of: "alice"))
        #expect(alice != SimulatedAir.address(of: "bob"))
        for name in ["alice", "bob", "", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2"] {
            #expect(SimulatedAir.address(of: name).value >> 46 == 0b11, "a static random address has its top bits set")
        }
    }

    @Test func placesTheDefaultSocketInTheRuntimeFolder() {
        #expect(SimulatedAir.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/nearplay/air.sock")
        #expect(SimulatedAir.defaultSocketPath(environment: [:]).hasSuffix("/air.sock"))
        #expect(SimulatedAir.defaultSocketPath(environment: [:]).hasPrefix("/tmp/nearplay-"))
    }
}
