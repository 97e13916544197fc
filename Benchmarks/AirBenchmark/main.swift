// nearplay-air-bench: what a busy simulated air costs a scanner.
//
// A hub in this process with 200 generated iBeacons at 10 Hz (1 to 10 m around the scanners), one
// SimulatedAirScanner in this process counting what it hears, and — the figure that matters — a
// separate `nearplay scan --backend sim --json` process (the whole scan pipeline: frames →
// sightings → ranging → events to /dev/null), whose CPU time is read from /proc/PID/stat.
//
// Usage: nearplay-air-bench [seconds] [--beacons N] [--nearplay PATH]
// Build with `swift build -c release --product nearplay-air-bench --product nearplay`.
//
// `nearplay-air-bench two-way [seeds]` instead runs the two-way ranging experiment in process
// (AirBenchmarkSupport.TwoWayAirExperiment): 12 players in an 8 m room, device offsets up to ±8 dB, under
// both offset models, and prints the one-way and two-way median errors over `seeds` rooms.
//
// `nearplay-air-bench crowd [seeds]` runs crowd calibration (AirBenchmarkSupport.CrowdAirExperiment):
// 12 players with transmit and receive offsets each up to ±8 dB mingle for 10 minutes in an 8 m room
// of unknown exponent (2–3.5), alone, with an anchor, or with four location beacons at known spots,
// and prints the offset and exponent errors and the one-way median error calibrated / uncalibrated.
//
// `nearplay-air-bench crowd-beacons [seeds]` runs the same rooms with location beacons alone (4, 5
// and 6 at known spots, no players), solved with the lasting shadowing per path estimated (the
// default) and fixed at the prior's 6 dB, and prints the exponent's error, its published standard
// error, how many rooms agents would use it in (standard error ≤ 0.3) and the shadowing used.
import AirBenchmarkSupport
import Foundation
import Radio
import Ranging
import Spawn
import Synchronization

if CommandLine.arguments.dropFirst().first == "two-way" {
    let seeds = CommandLine.arguments.dropFirst(2).first.flatMap(UInt64.init) ?? 10
    for model in TwoWayAirExperiment.OffsetModel.allCases {
        var pairs: [TwoWayAirExperiment.Pair] = []
        for seed in 1...max(1, seeds) {
            var experiment = TwoWayAirExperiment()
            experiment.offsetModel = model
            experiment.seed = seed
            pairs += experiment.run().pairs
        }
        let result = TwoWayAirExperiment.Outcome(pairs: pairs)
        let covered = pairs.filter { $0.twoWayInterval?.contains($0.truth) == true }.count
        print(String(format: "RESULT two_way offsets=%@ pairs=%d one_way_median_m=%.2f two_way_median_m=%.2f ratio=%.2f two_way_interval_coverage=%.2f",
                     model.rawValue, pairs.count, result.oneWayMedianError ?? -1, result.twoWayMedianError ?? -1, result.ratio ?? -1,
                     Double(covered) / Double(max(1, pairs.count))))
    }
    exit(0)
}

// `nearplay-air-bench crowd-cost [players…]` times one CrowdCalibration.solve over that many
// players (default 100 200 400), each with exchanges with 50 others (the lobby's partner cap):
// what one group of the lobby's solve costs (`crowdDevicesPerSolve`).
if CommandLine.arguments.dropFirst().first == "crowd-cost" {
    let sizes = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
    for players in sizes.isEmpty ? [100, 200, 400] : sizes {
        var random = SystemRandomNumberGenerator()
        let offsets = (0..<players).map { _ in (Double.random(in: -8...8, using: &random), Double.random(in: -8...8, using: &random)) }
        var exchanges: [CrowdCalibration.Exchange] = []
        for first in 0..<players {
            for step in 1...25 {  // 25 partners each way: 50 per player
                let second = (first + step * 7) % players
                guard second != first else { continue }
                let loss = Double.random(in: 10...35, using: &random)
                func reading(_ reader: Int, _ seen: Int) -> TwoWayRanging.Direction {
                    .init(filteredRSSI: -59 + offsets[seen].0 + offsets[reader].1 - loss + Double.random(in: -1...1, using: &random),
                          measuredPower: -59, filterVariance: 1)
                }
                exchanges.append(.init(first: String(first), second: String(second), firstHearsSecond: reading(first, second),
                                       secondHearsFirst: reading(second, first), site: "open"))
            }
        }
        let devices = (0..<players).map { CrowdCalibration.Device(id: String($0)) }
        let start = ContinuousClock.now
        let solution = CrowdCalibration.solve(devices: devices, exchanges: exchanges)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(String(format: "RESULT crowd_cost players=%d exchanges=%d iterations=%d seconds=%.3f peak_rss_mb=%.0f",
                     players, exchanges.count, solution.iterations, seconds, peakResidentMegabytes()))
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "crowd" {
    let seeds = CommandLine.arguments.dropFirst(2).first.flatMap(UInt64.init) ?? 10
    let spots = [(0.5, 0.5), (2.0, 0.5), (7.5, 0.5), (7.5, 7.5)].map { CrowdAirExperiment.Spot(x: $0.0, y: $0.1) }
    var variants: [(name: String, experiment: CrowdAirExperiment)] = []
    var players = CrowdAirExperiment()
    variants.append(("players", players))
    players.anchors = 1
    variants.append(("players+anchor", players))
    var withBeacons = CrowdAirExperiment()
    withBeacons.beacons = spots
    variants.append(("players+4beacons-known", withBeacons))
    // The simulated air has no lasting shadowing; the solve's default prior assumes 6 dB per path
    // (four beacons are too few to estimate it from, so they keep the prior's either way).
    withBeacons.options.knownDistanceShadowing = .fixed
    withBeacons.options.prior.shadowing = 1
    variants.append(("players+4beacons-known-shadowing1", withBeacons))
    withBeacons.anchors = 1
    withBeacons.options = CrowdCalibration.Options()
    variants.append(("players+anchor+4beacons-known", withBeacons))
    withBeacons.options.knownDistanceShadowing = .fixed
    withBeacons.options.prior.shadowing = 1
    variants.append(("players+anchor+4beacons-known-shadowing1", withBeacons))
    for (name, template) in variants {
        var sums: [Double] = [], transmits: [Double] = [], receives: [Double] = [], exponents: [Double] = []
        var sumErrors: [Double] = [], exponentErrors: [Double] = [], ratios: [Double] = [], covered = 0, total = 0
        var uncalibrated: [Double] = [], calibrated: [Double] = []
        let clock = ContinuousClock()
        let start = clock.now
        for seed in 1...max(1, seeds) {
            var experiment = template
            experiment.seed = seed
            let outcome = experiment.run()
            sums += outcome.sumErrors
            transmits += outcome.transmitErrors
            receives += outcome.receiveErrors
            if let error = outcome.exponentError, let site = outcome.solution.sites[""] {
                exponents.append(error)
                exponentErrors.append(site.exponentError)
                total += 1
                if error <= 2 * site.exponentError { covered += 1 }
            }
            for (index, error) in outcome.sumErrors.enumerated() {
                let published = outcome.solution.devices[CrowdAirExperiment.name(index + outcome.anchors)]?.sumError ?? 0
                sumErrors.append(published)
                total += 1
                if error <= 2 * published { covered += 1 }
            }
            if let ratio = outcome.ratio { ratios.append(ratio) }
            uncalibrated += outcome.oneWayUncalibratedErrors
            calibrated += outcome.oneWayCalibratedErrors
        }
        let elapsed = start.duration(to: clock.now)
        print(String(format: "RESULT crowd variant=%@ rooms=%d sum_error_median_db=%.2f sum_error_max_db=%.2f transmit_error_max_db=%.2f receive_error_max_db=%.2f sum_se_median_db=%.2f exponent_error_median=%.2f exponent_error_max=%.2f exponent_se_median=%.2f within_2se=%.2f one_way_ratio_median=%.2f one_way_ratio_max=%.2f one_way_median_m=%.2f calibrated_median_m=%.2f pooled_ratio=%.2f seconds=%.1f",
                     name, seeds, Calibration.median(sums) ?? -1, sums.max() ?? -1, transmits.max() ?? -1, receives.max() ?? -1,
                     Calibration.median(sumErrors) ?? -1, Calibration.median(exponents) ?? -1, exponents.max() ?? -1,
                     Calibration.median(exponentErrors) ?? -1, Double(covered) / Double(max(1, total)),
                     Calibration.median(ratios) ?? -1, ratios.max() ?? -1, Calibration.median(uncalibrated) ?? -1,
                     Calibration.median(calibrated) ?? -1, (Calibration.median(calibrated) ?? 0) / (Calibration.median(uncalibrated) ?? 1),
                     Double(elapsed.components.seconds)))
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "crowd-beacons" {
    let seeds = CommandLine.arguments.dropFirst(2).first.flatMap(UInt64.init) ?? 20
    let spots = [(0.5, 0.5), (2.0, 0.5), (7.5, 0.5), (7.5, 7.5), (0.5, 4.0), (4.0, 7.5)].map { CrowdAirExperiment.Spot(x: $0.0, y: $0.1) }
    let agentsAccept = 0.3   // Agent's NearbyLocations.crowdExponentError
    for count in 4...6 {
        for (name, shadowing) in [("estimated", CrowdCalibration.Shadowing.estimated(floor: 1)), ("fixed", .fixed)] {
            var errors: [Double] = [], published: [Double] = [], used: [Double] = []
            var covered = 0, usable = 0
            let clock = ContinuousClock()
            let start = clock.now
            for seed in 1...max(1, seeds) {
                var experiment = CrowdAirExperiment()
                experiment.players = 0
                experiment.beacons = Array(spots.prefix(count))
                experiment.options.knownDistanceShadowing = shadowing
                experiment.seed = seed
                let outcome = experiment.run()
                guard let error = outcome.exponentError, let site = outcome.solution.sites[""] else { continue }
                errors.append(error)
                published.append(site.exponentError)
                used.append(site.shadowing ?? .nan)
                if error <= 2 * site.exponentError { covered += 1 }
                if site.exponentError <= agentsAccept { usable += 1 }
            }
            let elapsed = start.duration(to: clock.now)
            print(String(format: "RESULT crowd_beacons beacons=%d shadowing=%@ rooms=%d exponent_error_median=%.2f exponent_error_max=%.2f exponent_se_median=%.2f within_2se=%.2f se_at_most_0.3=%d shadowing_median_db=%.2f shadowing_min_db=%.2f shadowing_max_db=%.2f seconds=%.1f",
                         count, name, errors.count, Calibration.median(errors) ?? -1, errors.max() ?? -1, Calibration.median(published) ?? -1,
                         Double(covered) / Double(max(1, errors.count)), usable, Calibration.median(used) ?? -1, used.min() ?? -1,
                         used.max() ?? -1, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
        }
    }
    exit(0)
}

var seconds = 10.0
var beaconCount = 200
var nearplayPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("nearplay").path
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--beacons": beaconCount = arguments.popFirst().flatMap(Int.init) ?? beaconCount
    case "--nearplay": nearplayPath = arguments.popFirst() ?? nearplayPath
    default:
        guard let value = Double(argument), value > 0 else {
            FileHandle.standardError.write(Data("usage: nearplay-air-bench [seconds] [--beacons N] [--nearplay PATH]\n".utf8))
            exit(64)
        }
        seconds = value
    }
}

let scenarioJSON = """
    {"sigma": 2, "loss": 0.05, "devices": {"bench": {"waypoints": [[0, 0, 0]]}, "probe": {"waypoints": [[0, 0.5, 0]]}},
     "beacons": [{"generate": \(beaconCount), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "interval": 0.1, "ring": [1, 10]}]}
    """
let scenario = try AirScenario(json: Data(scenarioJSON.utf8), source: "benchmark")
let folder = "/tmp/npbench-\(getpid())"
let socketPath = folder + "/air.sock"
let hub = try SimulatedAirHub(scenario: scenario, socketPath: socketPath)
let hubTask = Task { try await hub.run() }

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
let heard = Counter()
/// Counts what the in-process scanner hears.
@Sendable func countHeard() async throws {
    try await SimulatedAirScanner(socketPath: socketPath, device: "probe").scan { _ in
        heard.value.add(1, ordering: .relaxed)
    }
}
let scanTask = Task { try await countHeard() }

/// User + system CPU seconds of a process, from /proc/PID/stat (fields 14 and 15).
func cpuSeconds(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func residentMegabytes(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
    return kilobytes / 1024
}

func selfCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

var scanner: SpawnedProcess?
if FileManager.default.isExecutableFile(atPath: nearplayPath) {
    scanner = try SpawnedProcess(nearplayPath, ["scan", "--backend", "sim", "--air-socket", socketPath, "--device", "bench", "--json"],
                                 output: .null, errors: .null)
} else {
    print("note: \(nearplayPath) not found; measuring the in-process scanner only (build `nearplay` too for the scanner process)")
}

// Warm up: everyone connected, ranging tracks created.
try await Task.sleep(for: .seconds(2))
let clock = ContinuousClock()
let start = clock.now
let heard0 = heard.value.load(ordering: .relaxed)
let delivered0 = hub.census.framesDelivered
let scannerCPU0 = scanner.flatMap { cpuSeconds(of: $0.pid) }
let selfCPU0 = selfCPUSeconds()
try await Task.sleep(for: .seconds(seconds))
let elapsed = start.duration(to: clock.now)
let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
let heardRate = Double(heard.value.load(ordering: .relaxed) - heard0) / wall
let census = hub.census
let deliveredRate = Double(census.framesDelivered - delivered0) / wall
let selfCPU = selfCPUSeconds() - selfCPU0

print("simulated air: \(beaconCount) beacons at 10 Hz, \(census.scanning) scanners, \(String(format: "%.1f", wall)) s")
print(String(format: "  in-process scanner heard      %7.0f advertisements/s", heardRate))
print(String(format: "  hub delivered (all scanners)  %7.0f frames/s, %d dropped", deliveredRate, census.framesDropped))
print(String(format: "  hub + in-process scanner CPU  %7.1f %% of a core", 100 * selfCPU / wall))
if let scanner, let before = scannerCPU0, let after = cpuSeconds(of: scanner.pid) {
    let cpu = after - before
    let perScanner = deliveredRate / Double(max(1, census.scanning))
    print(String(format: "  `nearplay scan --backend sim --json` process: %.1f %% of a core (%.1f µs per advertisement), RSS %.1f MB",
                 100 * cpu / wall, 1e6 * cpu / max(1, perScanner * wall), residentMegabytes(of: scanner.pid) ?? 0))
    scanner.signal(SIGTERM)
    scanner.waitBlocking()
}
scanTask.cancel()
_ = await scanTask.result
hubTask.cancel()
_ = await hubTask.result
rmdir(folder)

/// Peak resident memory of this process so far (MB), from /proc/self/status.
func peakResidentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
    return kilobytes / 1024
}
