import Agent
import ArgumentParser
import Foundation
import Logging
import SensorSamples

/// `nearplay agent`: the player's device, joined up.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run the agent: advertise, scan, recognise players nearby, and carry invitations and games.",
        discussion: """
            Reads its configuration from --config (default $XDG_CONFIG_HOME/nearplay/agent.json; all keys \
            optional) and the session `nearplay login` stored. Other nearplay commands (nearby, invite, \
            accept, play, events, …) talk to it over a Unix socket in $XDG_RUNTIME_DIR/nearplay. \
            SIGTERM or Ctrl-C stops advertising and scanning and gives queued operations 3 s to reach \
            the lobby; whatever is left is sent at the next start.
            """
    )

    @Option(help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String?

    @Flag(name: .shortAndLong, help: "Log more.")
    var verbose = false

    func run() async throws {
        bootstrapCommandLogging(level: verbose ? .debug : .notice)
        let paths = AgentPaths()
        do {
            let configuration = try AgentConfiguration.load(path: config, paths: paths)
            let credentialsPath = configuration.credentials ?? paths.credentialsFile
            let credentials = try Credentials.load(from: credentialsPath)
            let radio = try AgentRadio.make(configuration.radio)
            let calibration: SensorCalibration
            do {
                calibration = try configuration.sensors.calibrationStore.load()
            } catch {
                // The sensors' errors are sentences that name the file; add the agent's way out.
                throw AgentError("""
                    The agent cannot use its sensor calibration: \(error) Or point "calibration" under "sensors" in \
                    \(config ?? paths.configurationFile) at another file.
                    """, code: "badConfiguration")
            }
            let rounds = SensorRoundPlayer(sensors: configuration.sensors, recordings: configuration.recordings, calibration: calibration)
            let agent = try await Agent(configuration: configuration, credentials: credentials, radio: radio,
                                        rounds: rounds, calibration: calibration, paths: paths, credentialsPath: credentialsPath)
            try await agent.run()
        } catch let error as AgentError {
            throw CommandFailure(error.message)
        }
    }
}

