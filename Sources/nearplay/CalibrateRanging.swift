import ArgumentParser
import BeaconFrames
import Foundation
import Proximity
import Radio
import Ranging
import Traces

/// `nearplay calibrate ranging`: this receiver's offset and the site's path-loss exponent, from
/// a beacon held at known distances.
struct CalibrateRanging: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ranging",
        abstract: "Fit this receiver's RSSI offset and the site's path-loss exponent from a beacon held at known distances.",
        discussion: """
        From the radio: `nearplay calibrate ranging --live --at 1 --at 3` asks you to hold the \
        beacon still at each distance in turn (1 m and 3 m are good), press Enter, and listens \
        --seconds there (the beacon heard loudest at the first distance, unless --beacon names one). \
        From traces: record the beacon held still at each distance, e.g. \
        `nearplay record at1m.jsonl --duration 60`, then \
        `nearplay calibrate ranging --at 1=at1m.jsonl --at 3=at3m.jsonl`. A trace whose lines carry \
        truth_m can be given as it is. The profile is stored for the receiver (--receiver) and used by \
        `replay`, `eval` and `scan` with --profile RECEIVER; the agent uses the one stored for its \
        adapter (hci0), its simulated air device, or "default".
        """
    )

    @Option(name: .customLong("at"), help: ArgumentHelp("A trace recorded with the beacon at this distance in metres (with --live: the distance alone); repeatable.", valueName: "METRES=FILE"))
    var recordings: [String] = []

    @Flag(help: "Listen to the radio (--backend) at each --at distance in turn instead of reading traces.")
    var live = false

    @Option(help: "With --live: seconds to listen at each distance.")
    var seconds: Double = 30

    @OptionGroup var radio: RadioOptions
    @OptionGroup var backend: BackendOptions

    @Argument(help: "Traces whose lines carry truth_m.")
    var files: [String] = []

    @Option(help: "Only readings of this beacon (UUID/major/minor, altbeacon:…, eddystone:…).")
    var beacon: String?

    @Option(help: "The receiver the profile is stored for.")
    var receiver: String = "default"

    @OptionGroup var profiles: ProfilesOption<CalibrateRanging>

    @Option(help: ArgumentHelp("The shadowing assumed at each spot the beacon was held (it sets how far the fit may move from the defaults, exponent 2.8 ± 0.5 and offset 0 ± 6 dB; 0: a plain least-squares fit). Lower it for clear line of sight and many distances.", valueName: "dB"))
    var spotShadowing: Double = 6

    @Flag(help: "Print the profile as JSON.")
    var json = false

    /// `--at` values parsed: a distance and a trace file (none with --live).
    func distances() throws -> [(distance: Double, path: String?)] {
        try recordings.map { text in
            let parts = text.split(separator: "=", maxSplits: 1)
            guard let metres = Double(parts[0]), metres > 0, metres < 1000, parts.count == (live ? 1 : 2) else {
                throw ValidationError(live
                    ? "--at \(text): with --live give the distance in metres alone, as in --at 1 --at 3."
                    : "--at \(text): give a distance in metres and a trace file, as in --at 1=at1m.jsonl (or listen to the radio with --live).")
            }
            return (metres, parts.count == 2 ? String(parts[1]) : nil)
        }
    }

    func validate() throws {
        let distances = try distances()
        if live {
            guard Set(distances.map(\.distance)).count >= 2, files.isEmpty else {
                throw ValidationError("With --live give two or more different distances (--at 1 --at 3) and no trace files.")
            }
            guard seconds >= 1, seconds <= 600 else { throw ValidationError("--seconds must be between 1 and 600.") }
            if let problem = backend.selection(adapter: radio.adapter).problem(name: BackendOptions.optionName) {
                throw ValidationError(problem)
            }
        }
        guard !recordings.isEmpty || !files.isEmpty else {
            throw ValidationError("Give traces recorded at known distances (--at 1=FILE --at 3=FILE), traces with truth_m, or --live --at 1 --at 3.")
        }
        guard spotShadowing >= 0, spotShadowing <= 30 else { throw ValidationError("--spot-shadowing must be between 0 and 30 dB.") }
        if let beacon, BeaconIdentity(beacon) == nil {
            throw ValidationError("--beacon \(beacon) is not a beacon identity: give UUID/major/minor, altbeacon:ID1/ID2/ID3 or eddystone:NAMESPACE/INSTANCE.")
        }
    }

    func run() async throws {
        var input = TraceInput()
        let wanted = beacon.flatMap(BeaconIdentity.init)
        var readings: [(distance: Double, rssi: Int, measuredPower: Int)] = []
        func take(_ records: [TraceRecord], at distance: Double?) {
            readings += CalibrationSplit.readings(records, at: distance, of: wanted)
        }
        if live {
            radio.bootstrapLogging()
            readings = try await listen(at: try distances().map(\.distance), for: wanted)
        } else {
            for case let (distance, path?) in try distances() {
                if let trace = input.read(path) { take(trace.records, at: distance) }
            }
            for path in files {
                if let trace = input.read(path) { take(trace.records, at: nil) }
            }
        }
        let profile: RangingProfile
        do {
            profile = try Calibration.siteProfile(readings: readings, spotShadowing: spotShadowing)
        } catch {
            throw CommandFailure("No profile: \(error).")
        }
        let store = profiles.store
        try store.save(profile, receiver: receiver)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            StandardOutput.line(String(decoding: try encoder.encode(profile), as: UTF8.self))
        } else {
            StandardOutput.line(String(format: "Receiver %@: offset %+.1f dB, path-loss exponent %.2f (%d readings at %@). Stored in %@.",
                                       receiver, profile.rssiOffset, profile.exponent, profile.readings,
                                       profile.distances.map(DistanceText.measured).joined(separator: ", "), store.path))
        }
        try input.finish(offsets: [:])
    }

    /// The readings of one beacon at each distance in turn, from the radio (``LiveCalibration``):
    /// the person holds the beacon there and presses Enter, then it listens `seconds`.
    func listen(at distances: [Double], for wanted: BeaconIdentity?) async throws -> [(distance: Double, rssi: Int, measuredPower: Int)] {
        let session = LiveCalibration(scanner: backend.selection(adapter: radio.adapter).makeScanner(), listening: .seconds(seconds))
        let listened = String(format: "%g", seconds)
        do {
            return try await session.readings(at: distances, of: wanted, ready: { distance in
                Diagnostics.write("Hold the beacon \(DistanceText.measured(distance)) from this device, still and in the open, then press Enter.\n")
                guard await Task.detached(operation: { readLine() }).value != nil else {
                    throw CommandFailure("Standard input ended before the reading at \(DistanceText.measured(distance)): run it at a terminal, or feed it a line per distance.")
                }
            }, progress: { progress in
                switch progress {
                case .listening:
                    Diagnostics.write("Listening for \(listened) s…\n")
                case .chose(let identity):
                    Diagnostics.write("Calibrating with \(identity), the beacon heard loudest.\n")
                case let .heard(distance, readings, median):
                    Diagnostics.write(String(format: "%@: %d readings, median %.0f dBm.\n", DistanceText.measured(distance), readings, median))
                }
            })
        } catch let error as LiveCalibrationError {
            // The session's reason as a sentence, naming the backend whose scanning to check.
            throw CommandFailure(error.description.prefix(1).uppercased() + error.description.dropFirst() + " (\(backend.backend)).")
        }
    }
}

extension CalibrateRanging: ProfilesHelp {
    static let profilesHelp = "The profile file (default: $XDG_CONFIG_HOME/nearplay/ranging-profiles.json)."
}
