import BeaconFrames
import DatabaseTestSupport
import Foundation
import LobbyDatabase
import Minigames
import SensorSamples
import Testing
@testable import Lobby

/// A store in its own temporary folder (SQLite) or database (PostgreSQL) with a manual clock and
/// cheap password hashing. Rounds are Statue unless configured otherwise: a Statue recording can
/// give any score from 0 to 1000, so the rules can be tested on chosen scores.
///
/// The engine is SQLite unless `NEARPLAY_LOBBY_ENGINE=postgres`: `scripts/test` runs the lobby's
/// tests once on each, against a private PostgreSQL cluster (``PrivatePostgres``) for the second.
/// Tests of what only SQLite has (its WAL, its migrations from old files) ask for it by name.
final class TestLobby {
    /// The engine tests run on when they do not name one.
    static var engine: SQLDialect {
        ProcessInfo.processInfo.environment["NEARPLAY_LOBBY_ENGINE"]?.lowercased() == "postgres" ? .postgres : .sqlite
    }

    var beacons: [String: BeaconIdentity] = [:]
    let store: LobbyStore
    let clock: ManualClock
    let folder: URL
    /// Where the store is: the SQLite file's path, or the PostgreSQL database's URL.
    let location: String

    init(engine: SQLDialect = TestLobby.engine, _ configure: (inout LobbyConfiguration) -> Void = { _ in }) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4)
        // Players here are established accounts, reported one way: the rules for new accounts
        // (invite only players met both ways) are FairPlayTests'.
        configuration.newAccountAge = 0
        configure(&configuration)
        clock = ManualClock()
        switch engine {
        case .sqlite:
            location = folder.appendingPathComponent("lobby.sqlite").path
        case .postgres:
            let server = try await PrivatePostgres.shared()
            location = try await server.createDatabase()
        }
        store = try await LobbyStore.open(location, configuration: configuration, clock: clock, poolSize: 2)
    }

    /// The SQLite file, for tests of what only SQLite has.
    var path: String { folder.appendingPathComponent("lobby.sqlite").path }

    /// Opens the same store again, as a restarted lobby would.
    func reopen(configuration: LobbyConfiguration? = nil) async throws -> LobbyStore {
        try await LobbyStore.open(location, configuration: configuration ?? store.configuration, clock: clock, poolSize: 2)
    }

    /// A recording of round `n` of `game`, on the plan the lobby drew for it (Quickdraw: with the
    /// signal it keeps hidden until revealed), that scores exactly `score` under `calibration`
    /// (a Statue round of 10 s when the game has no such round).
    func recording(game: Int64, round n: Int, score: Int, calibration: SensorCalibration = SensorCalibration()) async throws -> RoundRecording {
        let round = try await store.database.read { db in try Query.round(db, game: game, n: n) }
        let signal = try await store.database.read { db in
            try db.fetchValue(Double.self, "SELECT signalDelay FROM round WHERE gameId = ? AND n = ?", game, n)
        }
        let recording = SyntheticRecording.scoring(
            score, game: round?.minigame ?? "statue", duration: round?.duration ?? 10, signalTime: signal, calibration: calibration)
        return try #require(recording, "no recording of \(round?.minigame ?? "statue") scores \(score)")
    }

    /// Submits `score` for round `n` with a recording that gives it; a Quickdraw round is played
    /// as an agent plays it: the signal revealed, the clock moved on by the round's length.
    @discardableResult
    func submit(_ player: Int64, game: Int64, round n: Int, score: Int, key: String) async throws -> ScoreReceipt {
        if try await store.database.read({ db in try Query.round(db, game: game, n: n) })?.minigame == "quickdraw" {
            _ = try await store.revealSignal(player, game: game, round: n)
            clock.advance(by: Quickdraw().duration)
        }
        return try await store.submitScore(player, game: game, round: n, score: score, key: key, recording: try await recording(game: game, round: n, score: score))
    }

    /// Registers `username` and returns its id and beacon.
    @discardableResult
    func player(_ username: String) async throws -> (id: Int64, player: Player) {
        let player = try await store.register(Registration(
            username: username, firstName: "First", lastName: "Last", email: "\(username)@example.org", password: "password-123"))
        beacons[username] = player.beacon
        let session = try await store.logIn(username: username, password: "password-123")
        return (try await store.authenticate(token: session.token), player)
    }

    /// Registers several players; returns their ids in order.
    func players(_ usernames: String...) async throws -> [Int64] {
        var ids: [Int64] = []
        for name in usernames { ids.append(try await player(name).id) }
        return ids
    }

    /// `observer` reports seeing `seen` now; `seen`'s agent, advertising, is on the air.
    func see(_ observer: Int64, _ seenName: String) async throws {
        let seen = try await beacon(of: seenName)
        if let id = try await store.database.read({ db in try Query.player(db, username: seenName)?.id }) {
            store.noteActive(id)
        }
        _ = try await store.recordEncounters(reporter: observer, [
            EncounterReport(seen, distance: 1, at: clock.now()),
        ])
    }

    /// The identity `username`'s agent advertises now (it rotates every period).
    func beacon(of username: String) async throws -> BeaconIdentity {
        let record = try #require(try await store.database.read { db in try Query.player(db, username: username) })
        return store.currentBeacon(record, at: clock.now())
    }

    /// Invites, has everybody accept, and returns the open game's id.
    func openGame(_ inviter: Int64, with invitees: [(id: Int64, name: String)]) async throws -> Int64 {
        for invitee in invitees { try await see(inviter, invitee.name) }
        let invitation = try await store.invite(inviter, usernames: invitees.map(\.name))
        for invitee in invitees { _ = try await store.accept(invitee.id, invitation: invitation.id) }
        return invitation.id
    }

    /// Plays every round with the given scores per player id (same score each round).
    func play(_ game: Int64, _ scores: [Int64: [Int]]) async throws -> LobbyGame {
        for (player, perRound) in scores {
            for (index, score) in perRound.enumerated() {
                try await submit(player, game: game, round: index + 1, score: score, key: "k\(player)-\(index)")
            }
        }
        return try await store.game(scores.keys.first!, id: game)
    }

    deinit {
        // PostgreSQL connections would outlive the test; a SQLite store goes with its folder.
        if store.isShared { try? store.close() }
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The lobby's identities are iBeacon ones: their fields, for assertions.
extension BeaconIdentity {
    var uuid: UUID { iBeaconFields!.uuid }
    var major: Int { iBeaconFields!.major }
    var minor: Int { iBeaconFields!.minor }
}
