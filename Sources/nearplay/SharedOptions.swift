import ArgumentParser
import Radio
import Traces

// Options several commands take, each declared and checked once. A command names itself as the
// group's parameter and gives the option's help, so every flag keeps the wording it had in that
// command's --help.

/// A command's help for `--rssi-threshold`.
protocol RSSIThresholdHelp {
    static var rssiThresholdHelp: String { get }
}

/// `--rssi-threshold`: advertisements weaker than this are not heard (`scan`, `record`).
struct RSSIThresholdOption<Command: RSSIThresholdHelp>: ParsableArguments {
    // `.unconditional`: the value is usually negative (`--rssi-threshold -90`).
    @Option(parsing: .unconditional, help: ArgumentHelp(Command.rssiThresholdHelp))
    var rssiThreshold: Int = -110

    func validate() throws {
        guard (-127...20).contains(rssiThreshold) else { throw ValidationError("--rssi-threshold must be between -127 and 20 dBm.") }
    }
}

/// A command's help for `--profiles`.
protocol ProfilesHelp {
    static var profilesHelp: String { get }
}

/// `--profiles`: the ranging profile file (`calibrate ranging` writes it; `--profile` reads it).
struct ProfilesOption<Command: ProfilesHelp>: ParsableArguments {
    @Option(help: ArgumentHelp(Command.profilesHelp, valueName: "file"))
    var profiles: String?

    /// The file named, or the default one.
    var store: RangingProfileStore { RangingProfileStore(path: profiles) }
}

/// The scanner a command listens with (`scan`, `record`): the RSSI threshold, the radio, its
/// backend and how raw HCI scans, checked together.
struct ScannerOptions<Command: RSSIThresholdHelp>: ParsableArguments {
    @OptionGroup var threshold: RSSIThresholdOption<Command>
    @OptionGroup var radio: RadioOptions
    @OptionGroup var backend: BackendOptions
    @OptionGroup var hci: HCIScanOptions

    func validate() throws {
        if let problem = backend.selection(adapter: radio.adapter, hciScan: hci.settings).problem(name: BackendOptions.optionName) {
            throw ValidationError(problem)
        }
    }

    /// The radio these options choose, scanning with the threshold.
    var selection: RadioSelection {
        backend.selection(adapter: radio.adapter, rssiThreshold: threshold.rssiThreshold, hciScan: hci.settings)
    }
}
