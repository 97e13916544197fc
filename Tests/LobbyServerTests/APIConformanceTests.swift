import BusTestSupport
import Foundation
import LobbyClient
import Minigames
import SensorSamples
import Testing
import enum Lobby.SyntheticRecording

/// schemathesis (installed into the test venv by scripts/bootstrap) against a live `lobby serve`:
/// every operation of the OpenAPI document, examples, boundary coverage, fuzzing and stateful
/// sequences through its links, with positive and negative data and every check on. No server
/// error, every answer as the document says, data the document calls valid accepted and data it
/// calls invalid refused.
///
/// Left out, and why:
/// - DELETE /v1/players/me, DELETE /v1/sessions/current and PATCH /v1/players/me: they end the
///   one session the run has (deleting the account, logging out, a new password), after which
///   every other operation only answers 401.
/// - GET /v1/events/live: a WebSocket; an HTTP fuzzer can only get its 426 (RouterTests covers it).
/// - Positive cases that break a rule the document states in words because no schema can
///   (blocking yourself, a password of more than 72 bytes, the name rules, unpaired surrogates in
///   JSON keys) are not sent, nor the stateful step from a registration to the new player's photo,
///   which it has not put (the hooks' filter_case). Score submissions may answer positive data with
///   422: the recording must give the claimed score under the stored calibration
///   (Tests/Fixtures/schemathesis_lobby.toml).
@Suite(.serialized) struct APIConformanceTests {
    @Test(.timeLimit(.minutes(10))) func aLiveLobbyAnswersAsItsDocumentSays() async throws {
        let schemathesis = try testVenvProgram("schemathesis")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess(database: folder.appendingPathComponent("lobby.sqlite").path, folder: folder,
                                             arguments: ["--sign-in-throttle", "off"])
        defer { server.process.kill() }
        let base = LobbyClient(baseURL: server.url)
        _ = try await base.register(username: "alice", firstName: "Alice", lastName: "Tester", email: "alice@example.org", password: "password-123")
        let token = try await base.logIn(username: "alice", password: "password-123").token
        let state = folder.appendingPathComponent("state.json")
        try await ConformanceWorld.prepare(for: base.authenticated(token), lobby: base).write(to: state)

        // A longer run by hand: NEARPLAY_CONFORMANCE_EXAMPLES=200 NEARPLAY_CONFORMANCE_SEED=7; positive data
        // only: NEARPLAY_CONFORMANCE_MODE=positive; the whole report: NEARPLAY_CONFORMANCE_OUTPUT=FILE.
        let environment = ProcessInfo.processInfo.environment
        let examples = environment["NEARPLAY_CONFORMANCE_EXAMPLES"] ?? "20", seed = environment["NEARPLAY_CONFORMANCE_SEED"] ?? "1"
        let mode = environment["NEARPLAY_CONFORMANCE_MODE"] ?? "all"
        let run = try await SpawnedProcess(schemathesis, [
            "--config-file", ConformanceWorld.hooksFolder + "/schemathesis_lobby.toml",
            "run", server.url + "/v1/openapi.yaml", "--url", server.url,
            "-H", "Authorization: Bearer \(token)",
            "--checks", "all",
            // One worker: Debian 12's Python 3.11.2 raises "AST constructor recursion depth mismatch"
            // when Hypothesis parses lambdas' source on two threads at once (CPython gh-106905), which
            // ended a run as a runtime error with no failure found.
            "--mode", mode, "--max-examples", examples, "--seed", seed, "--workers", "1", "--no-color",
            "--exclude-name", "DELETE /v1/players/me", "--exclude-name", "DELETE /v1/sessions/current",
            "--exclude-name", "PATCH /v1/players/me", "--exclude-name", "GET /v1/events/live",
        ], environment: [
            "SCHEMATHESIS_HOOKS": "schemathesis_lobby_hooks", "PYTHONPATH": ConformanceWorld.hooksFolder,
            "NEARPLAY_CONFORMANCE_STATE": state.path, "NEARPLAY_CONFORMANCE_PLAYER": "alice", "NO_COLOR": "1",
        ]).finish()
        let summary = run.stdout.split(separator: "\n").suffix(40).joined(separator: "\n")
        if let output = environment["NEARPLAY_CONFORMANCE_OUTPUT"] { try run.stdout.write(toFile: output, atomically: true, encoding: .utf8) }
        if environment["NEARPLAY_CONFORMANCE_SUMMARY"] != nil { print(summary) }
        #expect(run.status == 0, "schemathesis found failures:\n\(run.stdout.suffix(6000))\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("43 selected / 47 total"), "\(summary)")  // + the two Quickdraw reveals (point 12) and on-air (point 10) of issue 21, the beacon keys and location resolution of issue 22, the radio offsets, beacon positions and hearings of issue 26
        #expect(!run.stdout.contains("not_a_server_error") && !run.stdout.contains("Server error"), "\(summary)")
        let generated = run.stdout.firstMatch(of: #/(\d+) generated/#).flatMap { Int($0.1) } ?? 0
        #expect(generated >= 1000, "only \(generated) cases were generated: \(summary)")

        // The fuzzer got past invitations: it played the prepared game to its end and a
        // tournament round (the hooks put in real ids and honest recordings).
        let alice = base.authenticated(token)
        let world = try ConformanceWorld.read(from: state)
        let game = try await alice.game(world.games[0])
        #expect(game.rounds.allSatisfy { $0.scores["alice"] != nil }, "the fuzzer scored no round of game \(game.id): \(game.rounds)")
        #expect(game.state == .finished, "\(game)")
        let entries = try await world.tournaments.asyncCompactMap { try? await alice.tournamentEntry($0) }
        #expect(entries.contains { $0.rounds.contains { $0.score != nil } }, "the fuzzer scored no tournament round: \(entries)")
    }
}

/// What APIConformanceTests prepares for the fuzzing player (alice) so that the operations on
/// games, invitations, locations and tournaments reach their logic, not only their 404: an open
/// game with bob whose scores are in, a pending invitation from carol, a location alice stands
/// at, its tournaments (alice joined the first), and an honest submission for each of alice's
/// rounds. Tests/Fixtures/schemathesis_lobby_hooks.py puts them into the fuzzer's cases.
struct ConformanceWorld: Codable {
    struct Submission: Codable {
        var score: Int
        var key: String
        var recording: RoundRecording
    }

    var games: [Int64]
    var invitations: [Int64]
    var locations: [Int64]
    var tournaments: [Int64]
    /// Game id → round → alice's honest submission.
    var scores: [String: [String: Submission]]
    var tournamentScores: [String: [String: Submission]]

    static var hooksFolder: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
    }

    static func prepare(for alice: LobbyClient, lobby: LobbyClient) async throws -> ConformanceWorld {
        func player(_ name: String) async throws -> LobbyClient {
            _ = try await lobby.register(username: name, firstName: name.capitalized, lastName: "Tester", email: "\(name)@example.org", password: "password-123")
            return lobby.authenticated(try await lobby.logIn(username: name, password: "password-123").token)
        }
        let bob = try await player("bob"), carol = try await player("carol")
        func sighting(of client: LobbyClient) async throws -> EncounterSighting {
            let beacon = try await client.me().beacon
            return EncounterSighting(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, distance: 1.5, at: Date())
        }
        _ = try await alice.reportEncounters([try await sighting(of: bob), try await sighting(of: carol)])
        _ = try await bob.reportEncounters([try await sighting(of: alice)])
        _ = try await carol.reportEncounters([try await sighting(of: alice)])

        // Alice's honest scores are verified under the calibration she stored last. The fuzzer's
        // valid calibrations would change it (and refuse those scores), so the day's changes are
        // spent here, the last one back to none: its calibrations then answer 409, or 200 for the
        // one stored, and 422 for one no device at rest gives.
        for floor in [-60.0, -50.0] {
            _ = try await alice.setCalibration(SensorCalibration(microphone: MicrophoneCalibration(pcm: "default", noiseFloorDBFS: floor)))
        }
        _ = try await alice.setCalibration(SensorCalibration())

        // An open game with bob's scores in: alice's honest scores finish it.
        let game = try await bob.invite(["alice"]).id
        _ = try await alice.accept(invitation: game)
        var scores: [String: Submission] = [:]
        for round in try await bob.game(game).rounds {
            // Quickdraw scores 0 here: a reaction is held to the lobby's clock of the reveal, and these are sent at once.
            let quickdraw = round.game == .quickdraw
            try await bob.submitHonestly(game: game, round: round.n, score: quickdraw ? 0 : 400, key: "bob-\(round.n)")
            let recording = try await alice.honestRecording(game: game, round: round.n, score: quickdraw ? 0 : 600)
            scores["\(round.n)"] = Submission(score: quickdraw ? 0 : 600, key: "alice-\(round.n)", recording: recording)
        }
        let pending = try await carol.invite(["alice"]).id

        // A location alice stands at, its tournaments, and honest rounds for her entry.
        let location = try await alice.registerLocation(name: "Conformance cafe")
        let here = try await alice.currentBeacon(location: location.id)
        _ = try await alice.reportEncounters([EncounterSighting(
            uuid: here.uuid, major: here.major, minor: here.minor, distance: 2, at: Date())])
        let tournaments = try await alice.tournaments(location: location.id).filter { $0.state == .open }.map(\.id)
        let first = try #require(tournaments.first, "location \(location.id) has no running tournament")
        var tournamentScores: [String: Submission] = [:]
        for round in try await alice.joinTournament(first).rounds {
            // Quickdraw's signal is revealed as the round starts; 0, as above.
            let quickdraw = round.game == .quickdraw
            let signal = quickdraw ? try await alice.revealTournamentSignal(tournament: first, round: round.n).signalTime : nil
            let recording = try #require(SyntheticRecording.scoring(
                quickdraw ? 0 : 500, game: round.game.name, duration: round.duration, signalTime: signal))
            tournamentScores["\(round.n)"] = Submission(score: quickdraw ? 0 : 500, key: "alice-t-\(round.n)", recording: recording)
        }
        return ConformanceWorld(
            games: [game], invitations: [pending, game], locations: [location.id], tournaments: tournaments,
            scores: ["\(game)": scores], tournamentScores: ["\(first)": tournamentScores])
    }

    func write(to url: URL) throws { try JSONEncoder().encode(self).write(to: url) }

    static func read(from url: URL) throws -> ConformanceWorld {
        try JSONDecoder().decode(ConformanceWorld.self, from: Data(contentsOf: url))
    }
}

extension Sequence {
    func asyncCompactMap<T>(_ transform: (Element) async throws -> T?) async rethrows -> [T] {
        var result: [T] = []
        for element in self { if let value = try await transform(element) { result.append(value) } }
        return result
    }
}
