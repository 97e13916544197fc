import BusTestSupport
import DatabaseTestSupport
import Foundation
import LobbyClient
import Synchronization
import Testing

/// Issue 23: two `lobby serve` instances on one PostgreSQL behind the repository's nginx site, a
/// mixed load through nginx, and one instance killed with SIGKILL in the middle of it.
@Suite(.serialized) struct MultiInstanceTests {
    static let arguments = ["--minigames", "statue", "--sign-in-throttle", "off", "--trusted-proxy", "127.0.0.1"]
    static let leaseLine = "This instance holds the lease \u{201C}tournament-scheduler\u{201D}"

    @Test(.timeLimit(.minutes(8))) func anInstanceKilledMidLoadLosesNothingAndTheOtherTakesOver() async throws {
        let postgres = try await PrivatePostgres.shared()
        let database = try await postgres.createDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-instances-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        // The first instance starts alone, so it is the one holding the scheduler's lease.
        let doomed = try await ServerProcess(database: database, folder: folder, arguments: Self.arguments)
        try await Self.waitForLog(doomed, Self.leaseLine, within: .seconds(60))
        let survivor = try await ServerProcess(database: database, folder: folder, arguments: Self.arguments)
        let nginx = try await PrivateNginx(upstreams: [doomed.port, survivor.port])
        defer { nginx.stop() }
        #expect(!Self.log(survivor).contains(Self.leaseLine), "both instances hold the scheduler's lease")

        let proxy = LobbyClient(baseURL: "http://127.0.0.1:\(nginx.port)")
        let gaps = Gaps()
        var players: [(name: String, client: LobbyClient, beacon: PlayerBeacon, token: String)] = []
        for i in 0..<8 {
            let name = "multi\(i)"
            let player = try await proxy.register(username: name, firstName: "M", lastName: "I", email: "\(name)@example.org", password: "password-123")
            let token = try await proxy.logIn(username: name, password: "password-123").token
            players.append((name, proxy.authenticated(token), player.beacon, token))
        }
        var games: [(id: Int64, players: [Int])] = []
        for pair in stride(from: 0, to: 8, by: 2) {
            let (a, b) = (players[pair], players[pair + 1])
            _ = try await a.client.reportEncounters([EncounterSighting(uuid: b.beacon.uuid, major: b.beacon.major, minor: b.beacon.minor, distance: 1, at: Date())])
            _ = try await b.client.reportEncounters([EncounterSighting(uuid: a.beacon.uuid, major: a.beacon.major, minor: a.beacon.minor, distance: 1, at: Date())])
            let invitation = try await a.client.invite([b.name])
            _ = try await b.client.accept(invitation: invitation.id)
            games.append((invitation.id, [pair, pair + 1]))
        }

        // Every player's live feed starts on the instance that will die, and resumes through nginx
        // (so on the survivor) from the last cursor it handled.
        let feeds = players.map { LiveFeed(first: LobbyClient(baseURL: doomed.url, token: $0.token), then: $0.client) }
        let listening = feeds.map { feed in Task { await feed.run() } }

        let acknowledged = Acknowledged()
        let team = players
        let scheduled = games
        let stop = StopFlag()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Registrations one after another until told to stop; a retry that finds the
                    // name taken means the first attempt went through before the instance died.
                    var i = 0
                    while !stop.isSet {
                        let name = "late\(i)"
                        i += 1
                        let outcome = await retrying(gaps) {
                            _ = try await proxy.register(username: name, firstName: "L", lastName: "T", email: "\(name)@example.org", password: "password-123")
                        }
                        if outcome { acknowledged.registered(name) }
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                }
                for game in scheduled {
                    for player in game.players {
                        let client = team[player].client
                        group.addTask {
                            for n in 1...3 {
                                let score = 10 * n + player
                                if await retrying(gaps, {
                                    _ = try await client.submitHonestly(game: game.id, round: n, score: score, key: "\(game.id)-\(player)-\(n)")
                                }) {
                                    acknowledged.scored(game.id, team[player].name, n, score)
                                }
                                try? await Task.sleep(for: .milliseconds(300 * (player % 3 + 1)))
                            }
                        }
                    }
                }
            }
        }

        let deadline = ContinuousClock.now + .seconds(120)
        while acknowledged.registrations.count < 20 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let killed = ContinuousClock.now
        await doomed.stop(signal: SIGKILL)
        try await Self.waitForLog(survivor, Self.leaseLine, within: .seconds(30))
        let handOver = ContinuousClock.now - killed
        // More registrations after the death, then the load ends.
        let registeredAtKill = acknowledged.registrations.count
        while acknowledged.registrations.count < registeredAtKill + 20 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        stop.set()
        await load.value

        let registrations = acknowledged.registrations
        let scores = acknowledged.scores
        #expect(registrations.count >= registeredAtKill + 20, "the load stalled after the kill")
        #expect(scores.count == 24, "\(24 - scores.count) score submissions were never acknowledged")
        #expect(gaps.failures.isEmpty, "requests that failed for good: \(gaps.failures.prefix(5))")
        let gap = gaps.longest
        print("multi-instance: failover gap (longest run of errors a retrying client saw) \(gap); lease hand-over \(handOver)")
        #expect(gap < .seconds(10))
        #expect(handOver < .seconds(10))

        // Nothing acknowledged is lost: every registration signs in, every score is in its game.
        for name in registrations {
            _ = try await proxy.logIn(username: name, password: "password-123")
        }
        for (gameId, name, n, score) in scores {
            let client = team.first { $0.name == name }!.client
            let game = try await client.game(gameId)
            #expect(game.rounds[n - 1].scores[name] == score, "game \(gameId) round \(n) of \(name) lost")
            #expect(game.state == .finished, "game \(gameId) has every score but is \(game.state)")
        }

        // Each live feed saw exactly the feed's events, in order, once, across the two instances.
        for (index, feed) in feeds.enumerated() {
            let stored = try await team[index].client.events(after: 0, limit: 1000).events.map(\.cursor)
            let deadline = ContinuousClock.now + .seconds(30)
            while feed.cursors.count < stored.count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(feed.cursors == stored, "\(team[index].name): pushed \(feed.cursors), stored \(stored)")
            #expect(feed.reconnections >= 1, "\(team[index].name)'s live feed never moved to the survivor")
        }
        for task in listening { task.cancel() }
        let status = await survivor.stop(signal: SIGTERM)
        #expect(status == 0)
    }

    static func log(_ server: ServerProcess) -> String { (try? String(contentsOf: server.output, encoding: .utf8)) ?? "" }

    static func waitForLog(_ server: ServerProcess, _ text: String, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while !log(server).contains(text) {
            guard ContinuousClock.now < deadline else {
                Issue.record("\u{201C}\(text)\u{201D} did not appear in the instance's log within \(limit): \(log(server).suffix(2000))")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Runs `request` until it succeeds, as a client behind a proxy retries: again after a transport
/// error or a 502/503/504 (the instance it reached died), for at most 30 s. Answers whether it
/// was acknowledged; a 4xx that says the first attempt went through (409) counts as not ours.
private func retrying(_ gaps: Gaps, _ request: () async throws -> Void) async -> Bool {
    var firstFailure: ContinuousClock.Instant?
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        do {
            try await request()
            if let firstFailure { gaps.record(ContinuousClock.now - firstFailure) }
            return true
        } catch let error as LobbyClientError where ![502, 503, 504].contains(error.status) {
            if let firstFailure { gaps.record(ContinuousClock.now - firstFailure) }
            if error.status != 409 { gaps.fail("\(error)") }
            return false
        } catch {
            if firstFailure == nil { firstFailure = ContinuousClock.now }
            guard ContinuousClock.now < deadline else {
                gaps.fail("no answer within 30 s: \(error)")
                return false
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// The longest time a retrying client spent between its first failed attempt and its success.
final class Gaps: Sendable {
    private let state = Mutex<(longest: Duration, failures: [String])>((.zero, []))
    func record(_ gap: Duration) { state.withLock { $0.longest = max($0.longest, gap) } }
    func fail(_ why: String) { state.withLock { $0.failures.append(why) } }
    var longest: Duration { state.withLock { $0.longest } }
    var failures: [String] { state.withLock { $0.failures } }
}

/// One player's live feed: on `first` until that connection ends, then on `then`, each time
/// resuming after the last cursor received; keeps every cursor in the order it arrived.
final class LiveFeed: Sendable {
    let first: LobbyClient
    let then: LobbyClient
    private let state = Mutex<(cursors: [Int64], reconnections: Int)>(([], 0))

    init(first: LobbyClient, then: LobbyClient) {
        self.first = first
        self.then = then
    }

    var cursors: [Int64] { state.withLock { $0.cursors } }
    var reconnections: Int { state.withLock { $0.reconnections } }

    func run() async {
        var client = first
        while !Task.isCancelled {
            let last = state.withLock { $0.cursors.last ?? 0 }
            do {
                for try await event in client.liveEvents(after: last) {
                    state.withLock { $0.cursors.append(event.cursor) }
                }
            } catch {}
            guard !Task.isCancelled else { return }
            client = then
            state.withLock { $0.reconnections += 1 }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
