import ArgumentParser
import Foundation
import Traces

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write a synthetic trace with truth_m from a scripted walk.",
        discussion: """
        Without --script, three beacons walk a built-in scenario (one approaches to 0.3 m and \
        leaves, one stands at 2 m and is switched off, one comes from 12 m to 4 m). A script is \
        JSON: {"beacons":[{"beacon":"UUID/major/minor","measured_power":-59,"interval":0.1,\
        "waypoints":[[0,8],[25,0.3],[60,8]]}]}, waypoints as [seconds, metres].
        """
    )

    @Option(help: "A walk script (JSON). Default: the built-in scenario.")
    var script: String?

    @Option(name: [.short, .long], help: "Where to write the trace. Default: standard output.")
    var output: String?

    @Option(help: "Path-loss exponent of the simulated room (2.8: a typical indoor room, as the development recordings suggest).")
    var exponent: Double = 2.8

    @Option(help: "Shadowing and fading, standard deviation in dB.")
    var sigma: Double = 4.0

    @Option(help: "Probability that a packet is lost (0 to 1).")
    var loss: Double = 0.1

    @Option(help: "Override every beacon's advertising interval, in seconds.")
    var interval: Double?

    @Option(help: "Random seed: the same seed gives the same trace.")
    var seed: UInt64 = 1

    func validate() throws {
        guard exponent >= 0.5, exponent <= 10 else { throw ValidationError("--exponent must be between 0.5 and 10; rooms are usually between 1.6 and 3.5.") }
        guard sigma >= 0, sigma <= 30 else { throw ValidationError("--sigma must be between 0 and 30 dB.") }
        guard loss >= 0, loss < 1 else { throw ValidationError("--loss must be at least 0 and less than 1.") }
        if let interval, !(interval >= 0.02 && interval <= 60) {
            throw ValidationError("--interval must be between 0.02 s (BLE's minimum) and 60 s.")
        }
    }

    func run() throws {
        var walk = WalkScript.demo
        if let script {
            guard let data = FileManager.default.contents(atPath: script) else {
                Diagnostics.error("cannot read the walk script \(script): check that the file exists")
                throw Diagnostics.noInput
            }
            do {
                walk = try JSONDecoder().decode(WalkScript.self, from: data)
            } catch {
                Diagnostics.error("\(script) is not a walk script: \(error)")
                throw Diagnostics.dataError
            }
        }
        if let interval {
            for i in walk.beacons.indices { walk.beacons[i].interval = interval }
        }
        if let problem = walk.problem() {
            Diagnostics.error("\(script ?? "the walk script"): \(problem)")
            throw Diagnostics.dataError
        }
        let parameters = SimulationParameters(pathLossExponent: exponent, shadowingSigma: sigma, packetLoss: loss, seed: seed)
        let (text, advertisements) = Simulator.trace(walk, parameters: parameters)
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else {
                Diagnostics.error("cannot write \(output): check that its folder exists and is writable")
                throw Diagnostics.cannotCreate
            }
            Diagnostics.write("wrote \(advertisements) advertisements from \(walk.beacons.count) beacons to \(output)\n")
        } else {
            StandardOutput.write(text)
        }
    }
}
