// Fault soak: `nearplay-lobby serve` killed with SIGKILL CYCLES times (10 by default) in the middle
// of a mixed load of the kinds of Benchmarks/lobby-load, from 8 pairs of players' clients at once:
// 60 % beacon resolution, 10 % statistics, 30 % invitations with their answers or score
// submissions (a pair shares one game at a time, so which of the two depends on its game). wrk cannot say which writes were acknowledged, so this client makes the requests itself
// and notes every write the lobby answered 2xx. After each kill, with the server down, it opens
// the database and checks that every acknowledged invitation, acceptance and score is there, and
// that the rules hold: the file intact, no dangling references, nobody over the open-game or
// open-invitation limits, every fully scored game finished with its unlocks. Then it restarts
// the server on the same file and goes on. Prints each cycle and the totals; exits 1 on any loss
// or broken rule. Usage (after `swift build -c release`):
//   .build/release/nearplay-lobby-soak [cycles]
import Foundation
import struct BeaconFrames.SplitMix64
import GRDB
import LobbyClient
import Minigames
import Spawn
import Synchronization
import enum Lobby.SyntheticRecording

let cycles = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 10
let pairs = 8
let password = "password-123"

// MARK: - The server as a child process

final class Server {
    let process: SpawnedProcess
    let port: Int

    init(executable: URL, database: String, log: URL) throws {
        process = try SpawnedProcess(executable.path, ["serve", "--db", database, "--port", "0", "--bcrypt-cost", "4", "--minigames", "statue",
                                                       "--sign-in-throttle", "off"],
                                     output: .file(log.path), errors: .file(log.path))
        let deadline = Date().addingTimeInterval(30)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").last { $0.hasPrefix("lobby listening on http://") }
                .flatMap { Int($0.split(separator: ":").last ?? "") }
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let found else {
            process.kill()
            throw SoakError("the lobby did not start: \((try? String(contentsOf: log, encoding: .utf8))?.suffix(600) ?? "")")
        }
        port = found
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func kill9() {
        process.kill()
    }
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - What the lobby acknowledged

struct Acknowledged: Sendable {
    var invitations: [(game: Int64, inviter: String, invitee: String)] = []
    var acceptances: [(game: Int64, player: String)] = []
    var scores: [(game: Int64, player: String, round: Int, score: Int)] = []
    var reads = 0
    var count: Int { invitations.count + acceptances.count + scores.count }
}

let acknowledged = Mutex(Acknowledged())
let failedRequests = Atomic<Int>(0)

struct Player: Sendable {
    let name: String
    let token: String
    let beacon: PlayerBeacon
}

/// One pair's client: plays the lobby-load mix until a request fails (the server died).
func drive(_ a: Player, _ b: Player, everyone: [Player], baseURL: String, seed: UInt64) async {
    var random = SplitMix64(seed: seed)
    let clientA = LobbyClient(baseURL: baseURL).authenticated(a.token)
    let clientB = LobbyClient(baseURL: baseURL).authenticated(b.token)
    do {
        // Seeing each other (stats and invitations need it), then where their game stands.
        let now = Date()
        _ = try await clientA.reportEncounters([EncounterSighting(uuid: b.beacon.uuid, major: b.beacon.major, minor: b.beacon.minor, distance: 1, at: now)])
        _ = try await clientB.reportEncounters([EncounterSighting(uuid: a.beacon.uuid, major: a.beacon.major, minor: a.beacon.minor, distance: 1, at: now)])
        var game = try await clientA.games().first { $0.state == .open || $0.state == .pending }
        while true {
            let roll = random.next() % 100
            if roll < 60 {
                let other = everyone[Int(random.next() % UInt64(everyone.count))]
                _ = try await clientA.resolve(other.beacon.beaconIdentity!)
                acknowledged.withLock { $0.reads += 1 }
            } else if roll < 70 {
                _ = try await clientA.statistics(of: b.name)
                acknowledged.withLock { $0.reads += 1 }
            } else if let current = game, let (client, player, round) = nextScore(current, a, b, clientA, clientB) {
                // The other 30 %: a score while the pair's game is open, else an invitation and its
                // answer (a pair shares one game at a time, as the rules say).
                let plan = current.rounds[round - 1]
                let score = Int(random.next() % 1000)
                guard let recording = SyntheticRecording.scoring(score, game: plan.game.name, duration: plan.duration, signalTime: plan.signalTime) else {
                    throw SoakError("no \(plan.game) recording scores \(score)")
                }
                let updated = try await client.submitScore(game: current.id, round: round, score: score, recording: recording,
                                                           key: "\(current.id)-\(player)-\(round)")
                acknowledged.withLock { $0.scores.append((current.id, player, round, score)) }
                game = updated.state == .finished ? nil : updated
            } else if game == nil || game?.state == .pending {
                let invitation: Invitation
                if let pending = game, pending.state == .pending {
                    invitation = try await clientB.accept(invitation: pending.id)
                } else {
                    let created = try await clientA.invite([b.name])
                    acknowledged.withLock { $0.invitations.append((created.id, a.name, b.name)) }
                    invitation = try await clientB.accept(invitation: created.id)
                }
                acknowledged.withLock { $0.acceptances.append((invitation.id, b.name)) }
                game = try await clientA.game(invitation.id)
            } else {
                game = try await clientA.game(game!.id)
            }
        }
    } catch {
        failedRequests.add(1, ordering: .relaxed)
    }
}

/// The next score missing in `game`: who sends it and for which round.
func nextScore(_ game: LobbyGame, _ a: Player, _ b: Player, _ clientA: LobbyClient, _ clientB: LobbyClient)
    -> (LobbyClient, String, Int)?
{
    guard game.state == .open else { return nil }
    for round in game.rounds.sorted(by: { $0.n < $1.n }) {
        if round.scores[a.name] == nil { return (clientA, a.name, round.n) }
        if round.scores[b.name] == nil { return (clientB, b.name, round.n) }
    }
    return nil
}

// MARK: - Checking the file while the server is down

/// Acknowledged writes missing from the file, and broken rules, as sentences.
func check(_ path: String, _ acknowledged: Acknowledged) throws -> (lost: [String], broken: [String]) {
    var configuration = Configuration()
    configuration.readonly = true
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    defer { try? queue.close() }
    return try queue.read { db in
        var lost: [String] = []
        var broken: [String] = []
        func id(_ name: String) throws -> Int64 { try Int64.fetchOne(db, sql: "SELECT id FROM player WHERE username = ?", arguments: [name]) ?? -1 }
        for (game, inviter, invitee) in acknowledged.invitations {
            let members = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM membership WHERE gameId = ? AND playerId IN (?, ?)",
                                           arguments: [game, try id(inviter), try id(invitee)]) ?? 0
            if members != 2 { lost.append("invitation \(game) from \(inviter) to \(invitee)") }
        }
        for (game, player) in acknowledged.acceptances {
            let response = try String.fetchOne(db, sql: "SELECT response FROM membership WHERE gameId = ? AND playerId = ?",
                                               arguments: [game, try id(player)])
            if response != "accepted" { lost.append("\(player)'s acceptance of \(game) (\(response ?? "no membership"))") }
        }
        for (game, player, round, score) in acknowledged.scores {
            let stored = try Int.fetchOne(db, sql: "SELECT score FROM score WHERE gameId = ? AND n = ? AND playerId = ?",
                                          arguments: [game, round, try id(player)])
            if stored != score { lost.append("\(player)'s score \(score) in game \(game) round \(round) (stored: \(stored.map(String.init) ?? "none"))") }
        }
        if try String.fetchOne(db, sql: "PRAGMA integrity_check") != "ok" { broken.append("integrity_check fails") }
        if try !Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty { broken.append("dangling references") }
        for row in try Row.fetchAll(db, sql: """
            SELECT m.playerId, COUNT(*) AS n FROM membership m JOIN game g ON g.id = m.gameId
            WHERE m.response = 'accepted' AND g.state IN ('pending', 'open') GROUP BY m.playerId HAVING n > 5
            """) { broken.append("player \(row["playerId"] as Int64) is in \(row["n"] as Int) open games (limit 5)") }
        for row in try Row.fetchAll(db, sql: """
            SELECT m.playerId, COUNT(*) AS n FROM membership m JOIN game g ON g.id = m.gameId
            WHERE m.response = 'pending' AND g.state = 'pending' GROUP BY m.playerId HAVING n > 10
            """) { broken.append("player \(row["playerId"] as Int64) holds \(row["n"] as Int) open invitations (limit 10)") }
        for row in try Row.fetchAll(db, sql: """
            SELECT g.id, g.state FROM game g WHERE (SELECT COUNT(*) FROM score s WHERE s.gameId = g.id)
                = (SELECT COUNT(*) FROM round r WHERE r.gameId = g.id)
                * (SELECT COUNT(*) FROM membership m WHERE m.gameId = g.id AND m.response = 'accepted')
              AND (SELECT COUNT(*) FROM score s WHERE s.gameId = g.id) > 0
            """) {
            let game: Int64 = row["id"]
            if row["state"] as String != "finished" { broken.append("game \(game) has every score but is \(row["state"] as String)") }
            let unlocks = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM unlock u JOIN membership a ON a.playerId = u.ownerId JOIN membership b ON b.playerId = u.unlockedId
                WHERE a.gameId = ?1 AND b.gameId = ?1 AND u.persistent
                """, arguments: [game]) ?? 0
            if unlocks != 2 { broken.append("finished game \(game) left \(unlocks) persistent unlocks, not 2") }
        }
        return (lost, broken)
    }
}

// MARK: - The soak

let binFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let executable = binFolder.appendingPathComponent("nearplay-lobby")
guard FileManager.default.isExecutableFile(atPath: executable.path) else {
    print("lobby-soak: no nearplay-lobby beside this program in \(binFolder.path): run `swift build -c release` first")
    exit(1)
}
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-lobby-soak-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let database = folder.appendingPathComponent("lobby.sqlite").path
let log = folder.appendingPathComponent("server.log")

var server = try Server(executable: executable, database: database, log: log)
let base = LobbyClient(baseURL: server.url)
var players: [Player] = []
for index in 0..<(2 * pairs) {
    let name = "soak\(index)"
    let profile = try await base.register(username: name, firstName: "S", lastName: "K", email: "\(name)@example.org", password: password)
    players.append(Player(name: name, token: try await base.logIn(username: name, password: password).token, beacon: profile.beacon))
}

var totalAcknowledged = 0
var totalLost = 0
var totalBroken = 0
var totalReads = 0
for cycle in 1...cycles {
    if cycle > 1 { server = try Server(executable: executable, database: database, log: log) }
    acknowledged.withLock { $0 = Acknowledged() }
    let url = server.url
    let everyone = players
    let load = Task {
        await withTaskGroup(of: Void.self) { group in
            for pair in 0..<pairs {
                group.addTask {
                    await drive(everyone[2 * pair], everyone[2 * pair + 1], everyone: everyone, baseURL: url,
                                seed: UInt64(cycle * 100 + pair))
                }
            }
        }
    }
    // Kill somewhere between 1.5 and 3.5 s into the load.
    try await Task.sleep(for: .milliseconds(1500 + (cycle * 737) % 2000))
    server.kill9()
    await load.value
    let seen = acknowledged.withLock { $0 }
    let (lost, broken) = try check(database, seen)
    print("kill \(cycle): \(seen.count) acknowledged writes (\(seen.invitations.count) invitations, \(seen.acceptances.count) acceptances, "
          + "\(seen.scores.count) scores) and \(seen.reads) reads; lost \(lost.count); rules broken \(broken.count)")
    for line in lost { print("  lost: \(line)") }
    for line in broken { print("  broken: \(line)") }
    totalAcknowledged += seen.count
    totalReads += seen.reads
    totalLost += lost.count
    totalBroken += broken.count
}
print("lobby-soak: \(cycles) SIGKILLs under load; \(totalAcknowledged) acknowledged writes, \(totalLost) lost; "
      + "\(totalReads) reads; rules broken: \(totalBroken)")
try? FileManager.default.removeItem(at: folder)
exit(totalLost == 0 && totalBroken == 0 ? 0 : 1)
