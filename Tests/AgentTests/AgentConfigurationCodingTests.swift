import Agent
import Foundation
import Radio
import Rounds
import Testing

/// The configuration encodes with the keys it decodes, so a program can write an agent's file
/// (as `nearplay demo` does) from the type instead of by hand.
@Suite struct AgentConfigurationCodingTests {
    @Test func encodesWithTheKeysItDecodes() throws {
        var configuration = AgentConfiguration()
        configuration.lobby = "http://127.0.0.1:8080"
        configuration.radio = .init(backend: .sim, airSocket: "/tmp/demo/air.sock", device: "alice")
        configuration.stateDirectory = "/tmp/demo/alice/state"
        configuration.socket = "/tmp/demo/alice/agent.sock"
        configuration.credentials = "/tmp/demo/alice/credentials.json"
        configuration.identityCacheSeconds = 30
        configuration.unknownIdentityCacheSeconds = 7
        configuration.encounterReportSeconds = 5
        configuration.notifications = false
        configuration.advertise = false
        configuration.autoPlay = true
        configuration.sensors = SensorSetup(accelFile: "/tmp/demo/shaker.jsonl")
        configuration.recordings = "/tmp/demo/recordings"
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(AgentConfiguration.self, from: data) == configuration)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == [
            "lobby", "radio", "state_directory", "socket", "credentials", "identity_cache_seconds", "unknown_identity_cache_seconds",
            "encounter_report_seconds", "notifications", "advertise", "auto_play", "sensors", "recordings",
        ])
        let radio = try #require(object["radio"] as? [String: Any])
        #expect(Set(radio.keys) == ["backend", "air_socket", "device"], "absent settings are left out")
        #expect(radio["backend"] as? String == "sim")
        let sensors = try #require(object["sensors"] as? [String: Any])
        #expect(sensors["accel_file"] as? String == "/tmp/demo/shaker.jsonl")
    }
}
