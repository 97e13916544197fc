import ArgumentParser
import Foundation
import Logging
import Radio

struct AirCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "air",
        abstract: "Run a simulated air: a hub several nearplay processes share as one room, no Bluetooth needed.",
        discussion: """
        Clients (`nearplay scan --backend sim --device NAME`, `nearplay advertise --backend sim …`, \
        agents) connect to the hub's Unix socket as one of the scenario's devices. The hub delivers \
        each advertiser's frames, and the scenario's static beacons, to every scanning device with an \
        RSSI from their scripted positions. Prints `air listening on PATH` once it accepts \
        connections; runs until interrupted. The scenario format is in the README.
        """
    )

    @Option(help: "The scenario: a JSON file of devices, their waypoints and static beacons.")
    var scenario: String

    @Option(help: "The hub's Unix socket. Default: $XDG_RUNTIME_DIR/nearplay/air.sock (or /tmp/nearplay-$UID/air.sock).")
    var socket: String?

    @Option(help: "Scenario seconds per real second (2 plays the scenario twice as fast).")
    var speed: Double = 1

    @Flag(name: .shortAndLong, help: "Log every client that joins and leaves.")
    var verbose = false

    func validate() throws {
        guard speed.isFinite, speed > 0, speed <= 1000 else {
            throw ValidationError("--speed must be above 0 and at most 1000, not \(speed).")
        }
    }

    func run() async throws {
        bootstrapCommandLogging(level: verbose ? .info : .notice)
        let scenario: AirScenario
        do {
            scenario = try AirScenario.load(contentsOf: self.scenario)
        } catch {
            Diagnostics.error(error.description)
            throw Diagnostics.dataError
        }
        let path = socket ?? SimulatedAir.defaultSocketPath()
        let hub: SimulatedAirHub<ContinuousClock>
        do {
            hub = try SimulatedAirHub(scenario: scenario, socketPath: path, speed: speed)
        } catch {
            Diagnostics.error(error.description)
            throw RadioFailure.unavailable
        }
        StandardOutput.line("air listening on \(path)")
        StandardOutput.flush()
        try await runUntilInterrupted { try await hub.run() }
    }
}
