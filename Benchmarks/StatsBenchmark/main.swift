import Foundation
import GRDB
@_spi(Benchmarks) import Lobby
import Minigames
import SystemSupport

// nearplay-stats-bench: the statistics figures of issue 11 on a store with a past.
//
//   nearplay-stats-bench [--players 100000] [--results 1000000] [--pages 3000] [--submissions 1000] [--db FILE]
//
// Seeds (HistorySeeder) a temporary SQLite store with the players and results, unless --db names
// one seeded before (it is then reused, so repeated runs skip the seeding), then measures in this
// process, one call at a time, through the store's public API (no HTTP):
//  - board pages: day, week, month, all-time and league boards for random players, at offset 0,
//    at the viewer's own place and at random depths; 20 entries each;
//  - result submissions with achievement checks: the score that finishes a one-round game, so
//    the call verifies the recording, closes the game, applies rewards, records results, board
//    points, league and achievements in one transaction;
//  - a player's statistics (GET /v1/players/{username}/stats without HTTP).
// Prints p50, p99 and max in milliseconds for each.

struct Options {
    var players = 100_000
    var results = 1_000_000
    var pages = 3_000
    var submissions = 1_000
    var db: String?

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        func usage(_ problem: String) -> Never {
            FileHandle.standardError.write(Data("""
                nearplay-stats-bench: \(problem)
                usage: nearplay-stats-bench [--players 100000] [--results 1000000] [--pages 3000] [--submissions 1000] [--db FILE]

                """.utf8))
            exit(64)
        }
        while let argument = iterator.next() {
            guard argument != "--help" && argument != "-h" else { usage("the statistics figures of issue 11 (Benchmarks/stats.md).") }
            guard let value = iterator.next() else { usage("\(argument) needs a value.") }
            if argument == "--db" { db = value; continue }
            guard let number = Int(value), number > 0 else { usage("\(argument) takes a whole number above 0, not \(value).") }
            switch argument {
            case "--players": players = number
            case "--results": results = number
            case "--pages": pages = number
            case "--submissions": submissions = number
            default: usage("unknown option \(argument).")
            }
        }
    }
}

func percentiles(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)] * 1000 }
    print(String(format: "%-44@ n=%5d  p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms", name as NSString, sorted.count, at(0.5), at(0.99), sorted.last! * 1000))
}

func time(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

let options = Options(CommandLine.arguments)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-stats-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let path = options.db ?? folder.appendingPathComponent("lobby.sqlite").path
let fresh = !FileManager.default.fileExists(atPath: path)
let store = try LobbyStore(path: path, configuration: LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4))
if fresh {
    let seeding = ContinuousClock.now
    let summary = try await HistorySeeder(store: store).seed(players: options.players, results: options.results)
    print("seeded \(summary.players) players, \(summary.games) games, \(summary.results) results in \(ContinuousClock.now - seeding)")
} else {
    print("reusing \(path)")
}
// Every live player's id, read from the file itself: the store lists no players.
let ids = try DatabaseQueue(path: path).read { db in try Int64.fetchAll(db, sql: "SELECT id FROM player WHERE deletedAt IS NULL ORDER BY id") }
print("players: \(ids.count)")
var random = SystemRandomNumberGenerator()

// Board pages.
var pageTimes: [String: [Double]] = [:]
let kinds: [BoardKind] = [.day, .week, .month, .allTime, .league]
for index in 0..<options.pages {
    let viewer = ids.randomElement(using: &random)!
    let kind = kinds[index % kinds.count]
    let first = try await store.leaderboard(viewer: viewer, board: kind)
    let offset: Int = switch (index / kinds.count) % 3 {
    case 0: 0
    case 1: max(0, (first.me?.rank ?? 1) - 10)
    default: Int.random(in: 0..<max(1, first.participants), using: &random)
    }
    let elapsed = try await time { _ = try await store.leaderboard(viewer: viewer, board: kind, offset: offset) }
    pageTimes[kind.name, default: []].append(elapsed)
}
for kind in kinds { percentiles("board page: \(kind.name)", pageTimes[kind.name] ?? []) }
percentiles("board page: any", pageTimes.values.flatMap { $0 })

// Statistics.
var statisticsTimes: [Double] = []
for _ in 0..<min(options.pages, 1000) {
    let viewer = ids.randomElement(using: &random)!
    let name = try await store.player(viewer).username
    statisticsTimes.append(try await time { _ = try await store.statistics(viewer: viewer, username: name) })
}
percentiles("statistics of a player", statisticsTimes)

// Result submissions: one-round games where the opponent has scored; the measured call finishes
// them. Screamer (5 s, 100 level windows: the load test's rounds) and Statue (10 s of accelerometer
// samples, the largest recordings): the lobby verifies and stores every recording first.
for (minigame, duration, seed) in [(MinigameName.screamer, 5.0, UInt64(7)), (MinigameName.statue, 10.0, UInt64(8))] {
    let games = try await store.benchmarkOpenGames(count: options.submissions, among: ids, minigame: minigame, duration: duration, seed: seed)
    let recordings = try (0..<20).map { index -> (Int, RoundRecording) in
        let score = 50 * index + 7
        guard let recording = SyntheticRecording.scoring(score, game: minigame, duration: duration) else { throw CocoaError(.featureUnsupported) }
        return (score, recording)
    }
    // What verifying and encoding alone cost (the lobby verifies every submission and writes its
    // recording with JSONWriter before its transaction).
    var verifyTimes: [Double] = []
    for index in 0..<200 {
        let (score, recording) = recordings[index % recordings.count]
        verifyTimes.append(try await time {
            _ = try ScoreVerifier().verify(claimedScore: score, recording: recording)
            _ = JSONWriter.encode(recording)
        })
    }
    percentiles("\(minigame): verify + encode the recording alone", verifyTimes)
    var submissionTimes: [Double] = []
    var granted = 0
    let before = store.checkpoints
    for (index, game) in games.enumerated() {
        let (score, recording) = recordings[index % recordings.count]
        var receipt: ScoreReceipt?
        submissionTimes.append(try await time {
            receipt = try await store.submitScore(game.player, game: game.game, round: 1, score: score, key: "bench-\(game.game)", recording: recording)
        })
        precondition(receipt?.game.state == .finished, "the submission did not finish game \(game.game)")
        granted += receipt?.game.achievements?.count ?? 0
    }
    percentiles("\(minigame): result submission (finishes a game)", submissionTimes)
    let after = store.checkpoints
    print("  WAL checkpoints meanwhile: \(after.background - before.background) beside the writer, \(after.finishing - before.finishing) between transactions, \(after.inCommit - before.inCommit) in a commit; slowest: "
        + submissionTimes.sorted(by: >).prefix(5).map { String(format: "%.1f ms", $0 * 1000) }.joined(separator: ", "))
    print("achievements granted by those submissions: \(granted)")
}
try store.close()
