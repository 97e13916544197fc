import ArgumentParser
import BeaconFrames
import Foundation
import Ranging
import Traces

/// `nearplay calibrate ranging`: this receiver's offset and the site's path-loss exponent, from
/// a beacon held at known distances.
struct CalibrateRanging: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ranging",
        abstract: "Fit this receiver's RSSI offset and the site's path-loss exponent from a beacon held at known distances.",
        discussion: """
        Record the beacon held still at two or more distances (1 m and 3 m are good), e.g. \
        `nearplay record -o at1m.jsonl` for a minute at each, then \
        `nearplay calibrate ranging --at 1=at1m.jsonl --at 3=at3m.jsonl`. A trace whose lines carry \
        truth_m can be given as it is. The profile is stored for the receiver (--receiver) and used by \
        `replay`, `eval` and `scan` with --profile RECEIVER; the agent uses the one stored for its \
        adapter (hci0), its simulated air device, or "default".
        """
    )

    @Option(name: .customLong("at"), help: ArgumentHelp("A trace recorded with the beacon at this distance in metres; repeatable.", valueName: "METRES=FILE"))
    var recordings: [String] = []

    @Argument(help: "Traces whose lines carry truth_m.")
    var files: [String] = []

    @Option(help: "Only readings of this beacon (UUID/major/minor, altbeacon:…, eddystone:…).")
    var beacon: String?

    @Option(help: "The receiver the profile is stored for.")
    var receiver: String = "default"

    @Option(help: ArgumentHelp("The profile file (default: $XDG_CONFIG_HOME/nearplay/ranging-profiles.json).", valueName: "file"))
    var profiles: String?

    @Option(help: ArgumentHelp("The shadowing assumed at each spot the beacon was held (it sets how far the fit may move from the defaults, exponent 2.8 ± 0.5 and offset 0 ± 6 dB; 0: a plain least-squares fit). Lower it for clear line of sight and many distances.", valueName: "dB"))
    var spotShadowing: Double = 6

    @Flag(help: "Print the profile as JSON.")
    var json = false

    /// `--at` values parsed.
    func distances() throws -> [(distance: Double, path: String)] {
        try recordings.map { text in
            let parts = text.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let metres = Double(parts[0]), metres > 0, metres < 1000 else {
                throw ValidationError("--at \(text): give a distance in metres and a trace file, as in --at 1=at1m.jsonl.")
            }
            return (metres, String(parts[1]))
        }
    }

    func validate() throws {
        _ = try distances()
        guard !recordings.isEmpty || !files.isEmpty else {
            throw ValidationError("Give traces recorded at known distances (--at 1=FILE --at 3=FILE) or traces with truth_m.")
        }
        guard spotShadowing >= 0, spotShadowing <= 30 else { throw ValidationError("--spot-shadowing must be between 0 and 30 dB.") }
        if let beacon, BeaconIdentity(beacon) == nil {
            throw ValidationError("--beacon \(beacon) is not a beacon identity: give UUID/major/minor, altbeacon:ID1/ID2/ID3 or eddystone:NAMESPACE/INSTANCE.")
        }
    }

    func run() throws {
        var input = TraceInput()
        let wanted = beacon.flatMap(BeaconIdentity.init)
        var readings: [(distance: Double, rssi: Int, measuredPower: Int)] = []
        func take(_ records: [TraceRecord], at distance: Double?) {
            for record in records {
                guard let sighting = Sighting(record.advertisement), wanted == nil || sighting.identity == wanted,
                      let rssi = sighting.rssi, RangingConfiguration.plausibleRSSI.contains(rssi),
                      let power = sighting.measuredPower, let metres = distance ?? record.truthDistance else { continue }
                readings.append((metres, rssi, power))
            }
        }
        for (distance, path) in try distances() {
            if let trace = input.read(path) { take(trace.records, at: distance) }
        }
        for path in files {
            if let trace = input.read(path) { take(trace.records, at: nil) }
        }
        let profile: RangingProfile
        do {
            profile = try Calibration.siteProfile(readings: readings, prior: spotShadowing > 0 ? SitePrior(shadowing: spotShadowing) : nil)
        } catch {
            throw CommandFailure("No profile: \(error).")
        }
        let store = RangingProfileStore(path: profiles)
        try store.save(profile, receiver: receiver)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            StandardOutput.line(String(decoding: try encoder.encode(profile), as: UTF8.self))
        } else {
            StandardOutput.line(String(format: "Receiver %@: offset %+.1f dB, path-loss exponent %.2f (%d readings at %@). Stored in %@.",
                                       receiver, profile.rssiOffset, profile.exponent, profile.readings,
                                       profile.distances.map { String(format: "%g m", $0) }.joined(separator: ", "), store.path))
        }
        try input.finish(offsets: [:])
    }
}
