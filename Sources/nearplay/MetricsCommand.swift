import Agent
import ArgumentParser
import Foundation

/// `nearplay metrics`: the running agent's counts in the Prometheus text format, for a look by
/// hand or for node_exporter's textfile collector (`nearplay metrics > …/nearplay.prom`).
struct MetricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the running agent's metrics in the Prometheus text format.",
        discussion: """
            Advertisements (total and a second), tracked beacons, identity resolutions from the cache \
            and from the lobby, the outgoing queue's depth, reconnections to the lobby and the scanner's \
            restarts after the radio fell silent.
            """
    )
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.metrics, as: String.self) { text in print(text, terminator: "") }
    }
}
