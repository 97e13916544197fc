import BeaconFrames
import BeaconKeys
import Foundation
import GRDB
@_spi(Benchmarks) import Lobby

// nearplay-rotation-bench: the lobby's side of rotating identities (issue 22), in this process,
// through the store's public API (no HTTP).
//
//   nearplay-rotation-bench [--players 100000] [--lookups 20000] [--period 900]
//
// Seeds (HistorySeeder, no results) a temporary store with the players, each with a secret,
// then:
//  - opens it again: loading every secret and building the four periods' tables around now;
//  - builds one period's table alone (what the store does in the background ahead of a period);
//  - resolves the identities random players advertise now, and ones they advertised in the
//    period before (a clock a period behind), as `GET /v1/beacons/…` does;
//  - records encounter reports of 10 such sightings each;
// and prints p50, p99 and max in milliseconds, the times, and the process's RSS.

var players = 100_000
var lookups = 20_000
var periodSeconds = 900
var arguments = CommandLine.arguments.dropFirst()
func usage() -> Never {
    FileHandle.standardError.write(Data("usage: nearplay-rotation-bench [--players 100000] [--lookups 20000] [--period 900]\n".utf8))
    exit(64)
}
while let argument = arguments.popFirst() {
    guard let value = arguments.popFirst(), let number = Int(value), number > 0 else { usage() }
    switch argument {
    case "--players": players = number
    case "--lookups": lookups = number
    case "--period": periodSeconds = number
    default: usage()
    }
}

func percentiles(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)] * 1000 }
    print(String(format: "%-52@ n=%6d  p50 %6.3f ms  p99 %6.3f ms  max %6.3f ms", name as NSString, sorted.count, at(0.5), at(0.99), sorted.last! * 1000))
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func residentMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-rotation-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("lobby.sqlite").path
var configuration = LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4)
configuration.rotationPeriod = RotationPeriod(seconds: periodSeconds)!
// One viewer asks many times here: the per-player limits would stop the benchmark, not measure it.
configuration.resolutionsPerMinute = 1_000_000
configuration.encounterReportsPerMinute = 1_000_000
configuration.identityGuessesPerHour = 1_000_000
do {
    let seeding = try LobbyStore(path: path, configuration: configuration)
    let summary = try await HistorySeeder(store: seeding).seed(players: players, results: 0)
    print("seeded \(summary.players) players with secrets")
    try seeding.close()
}
let rssBefore = residentMegabytes()
let opening = ContinuousClock.now
let store = try LobbyStore(path: path, configuration: configuration)
let opened = ContinuousClock.now - opening
let census = store.identityCensus
print(String(format: "open: %.2f s (loads %d secrets, builds %d tables); RSS %.0f MB → %.0f MB", seconds(opened), census.players, census.tables,
             rssBefore, residentMegabytes()))
let period = configuration.rotationPeriod
let now = Date()
let building = ContinuousClock.now
let size = try await store.benchmarkBuildIdentityTable(period: period.index(at: now) + 5)
print(String(format: "one period's table of %d players: %.3f s", size, seconds(ContinuousClock.now - building)))

// Who is who: ids and secrets, read as the store holds them; everyone on the air.
let rows = try DatabaseQueue(path: path).read { db in
    try Row.fetchAll(db, sql: "SELECT id, beaconSecret FROM player WHERE beaconSecret IS NOT NULL AND deletedAt IS NULL")
}
let people = rows.compactMap { row -> (id: Int64, secret: BeaconSecret)? in
    guard let data: Data = row["beaconSecret"], let secret = BeaconSecret(bytes: Array(data)) else { return nil }
    return (row["id"], secret)
}
for person in people { store.noteActive(person.id) }
var random = SystemRandomNumberGenerator()
let uuid = configuration.deploymentUUID

for (name, offset) in [("resolve: the identity of now", Int64(0)), ("resolve: the identity of the period before", -1)] {
    var times: [Double] = []
    var found = 0
    for _ in 0..<lookups {
        let viewer = people.randomElement(using: &random)!, target = people.randomElement(using: &random)!
        let (major, minor) = RotatingIdentity.player(target.secret, period: period.index(at: Date()) + offset)
        let start = ContinuousClock.now
        if let profile = try? await store.resolve(viewer: viewer.id, beacon: BeaconIdentity(uuid: uuid, major: major, minor: minor)!), !profile.username.isEmpty { found += 1 }
        times.append(seconds(ContinuousClock.now - start))
    }
    percentiles(name, times)
    print("  resolved \(found) of \(lookups) (the rest: the viewer itself or a collision)")
}

var reportTimes: [Double] = []
for _ in 0..<(lookups / 10) {
    let reporter = people.randomElement(using: &random)!
    let sightings = (0..<10).map { _ in
        let target = people.randomElement(using: &random)!
        let (major, minor) = RotatingIdentity.player(target.secret, period: period.index(at: Date()))
        return EncounterReport(BeaconIdentity(uuid: uuid, major: major, minor: minor)!, distance: 2, at: Date())
    }
    let start = ContinuousClock.now
    _ = try await store.recordEncounters(reporter: reporter.id, sightings)
    reportTimes.append(seconds(ContinuousClock.now - start))
}
percentiles("encounter report of 10 sightings", reportTimes)
print(String(format: "RSS at the end: %.0f MB", residentMegabytes()))
try store.close()
