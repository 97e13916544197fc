import ArgumentParser

/// `nearplay calibrate …`: measurements stored for later use.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure this device and store the result.",
        subcommands: [CalibrateSensors.self, CalibrateRanging.self]
    )
}
