import ArgumentParser
import BeaconFrames
import Ranging
import Traces

/// The ranging choices shared by `replay`, `eval` and the live commands.
struct RangingOptions: ParsableArguments {
    enum FilterName: String, ExpressibleByArgument, CaseIterable {
        case following, kalman, arma, trimmed, none
    }

    enum ModelName: String, ExpressibleByArgument, CaseIterable {
        case logDistance = "log-distance"
        case altbeacon
    }

    @Option(help: "RSSI filter: \(FilterName.allCases.map(\.rawValue).joined(separator: ", ")) (following: the Kalman filter with a fast one beside it that restarts it when the beacon moves).")
    var filter: FilterName = .following

    @Option(help: "Kalman process noise in dB² per second (how fast the true RSSI may drift).")
    var processNoise: Double = 0.2

    @Option(help: "Kalman measurement noise in dB² (the variance of one reading).")
    var measurementNoise: Double = 32

    @Option(help: "Process noise of the following filter's fast Kalman filter, in dB² per second.")
    var movingProcessNoise: Double = 20

    @Option(help: ArgumentHelp("Seconds a new zone must hold before it is reported (0: at once).", valueName: "seconds"))
    var zoneDwell: Double = 2

    @Option(help: "ARMA coefficient, 0 < c ≤ 1 (1 is no smoothing).")
    var armaCoefficient: Double = 0.1

    @Option(help: "Window of the trimmed running average in seconds.")
    var averageWindow: Double = 20

    @Option(help: "Distance model: log-distance, or altbeacon (the AltBeacon library's Nexus 5 curve).")
    var model: ModelName = .logDistance

    @Option(help: "Path-loss exponent of the log-distance model (2 is free space).")
    var exponent: Double = 2.8

    // `.unconditionalSingleValue`: offsets are often negative (`--rssi-offset -3`).
    @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("dB added to readings: a receiver's calibration offset. DB for all receivers, or RX=DB for the receiver named RX in the trace; repeatable.", valueName: "[RX=]DB"))
    var rssiOffset: [String] = []

    /// The parsed `--rssi-offset` values: the default and the per-receiver ones.
    func offsets() throws -> (all: Double, byReceiver: [Receiver: Double]) {
        var all = 0.0
        var byReceiver: [Receiver: Double] = [:]
        for text in rssiOffset {
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let value = Double(parts.last ?? ""), value.isFinite, abs(value) < 60 else {
                throw ValidationError("--rssi-offset \(text): give a number of dB (between -60 and 60), optionally after RX= naming a receiver.")
            }
            if parts.count == 2 { byReceiver[Receiver(String(parts[0]))] = value } else { all = value }
        }
        return (all, byReceiver)
    }

    @Option(help: ArgumentHelp("Use the ranging profile stored for this receiver by `nearplay calibrate ranging` (its offset and exponent replace --rssi-offset and --exponent).", valueName: "receiver"))
    var profile: String?

    @OptionGroup var profiles: ProfilesOption<RangingOptions>

    /// The stored profile --profile names; nil without --profile.
    func storedProfile() throws -> RangingProfile? {
        guard let profile else { return nil }
        let store = profiles.store
        guard let stored = try store.load().receivers[profile] else {
            throw ValidationError("--profile \(profile): \(store.path) has no profile for that receiver; run `nearplay calibrate ranging --receiver \(profile) …` first.")
        }
        return stored
    }

    @Option(help: "Shortest exit timeout in seconds.")
    var minExitTimeout: Double = 2

    @Option(help: "Longest exit timeout in seconds.")
    var maxExitTimeout: Double = 30

    @Option(help: "Seconds between range events per beacon (0: at every sighting).")
    var rangeInterval: Double = 1

    // Comparisons are written so that NaN fails them.
    func validate() throws {
        guard processNoise > 0, processNoise.isFinite, measurementNoise > 0, measurementNoise.isFinite else {
            throw ValidationError("--process-noise and --measurement-noise must be positive numbers.")
        }
        guard filter != .following || (movingProcessNoise > processNoise && movingProcessNoise.isFinite) else {
            throw ValidationError("--moving-process-noise must be a number larger than --process-noise.")
        }
        guard zoneDwell >= 0, zoneDwell <= 60 else { throw ValidationError("--zone-dwell must be between 0 and 60 seconds.") }
        guard armaCoefficient > 0, armaCoefficient <= 1 else { throw ValidationError("--arma-coefficient must be in (0, 1].") }
        guard averageWindow > 0, averageWindow <= 3600 else { throw ValidationError("--average-window must be between 0 and 3600 seconds.") }
        guard exponent >= 0.5, exponent <= 10 else { throw ValidationError("--exponent must be between 0.5 and 10; indoors it is usually between 1.6 and 3.5.") }
        guard minExitTimeout > 0, maxExitTimeout >= minExitTimeout, maxExitTimeout <= 86_400 else {
            throw ValidationError("--min-exit-timeout must be positive and no larger than --max-exit-timeout, which must be at most a day (86400 s).")
        }
        guard rangeInterval >= 0, rangeInterval <= 86_400 else { throw ValidationError("--range-interval must be between 0 and 86400 seconds.") }
        _ = try offsets()
        _ = try storedProfile()
    }

    var configuration: RangingConfiguration {
        let filterKind: RSSIFilterKind = switch filter {
        case .following: .following(processNoise: processNoise, measurementNoise: measurementNoise, movingProcessNoise: movingProcessNoise)
        case .kalman: .kalman(processNoise: processNoise, measurementNoise: measurementNoise)
        case .arma: .arma(coefficient: armaCoefficient)
        case .trimmed: .trimmedMean(window: averageWindow, trim: 0.1)
        case .none: .arma(coefficient: 1)
        }
        let distanceModel: DistanceModel = switch model {
        case .logDistance: .logDistance(exponent: exponent)
        case .altbeacon: .altBeaconCurve(.nexus5)
        }
        let offsets: (all: Double, byReceiver: [Receiver: Double]) = (try? offsets()) ?? (0, [:])
        let configuration = RangingConfiguration(filter: filterKind, distanceModel: distanceModel, rssiOffset: offsets.all,
                                    receiverOffsets: offsets.byReceiver, zones: ZoneBoundaries(dwell: zoneDwell),
                                    presence: PresenceConfiguration(minimumTimeout: minExitTimeout, maximumTimeout: maxExitTimeout),
                                    rangeInterval: rangeInterval)
        return ((try? storedProfile()) ?? nil).map { $0.applied(to: configuration) } ?? configuration
    }
}

extension RangingOptions: ProfilesHelp {
    static let profilesHelp = "The profile file --profile reads (default: $XDG_CONFIG_HOME/nearplay/ranging-profiles.json)."
}
