import DatabaseTestSupport
import Foundation
import GRDB
import LobbyDatabase
import Testing
@testable import Lobby

/// `nearplay lobby migrate` (issue 23): a SQLite lobby with a history moved into PostgreSQL reads
/// the same there, and the PostgreSQL lobby carries on from it.
@Suite struct LobbyMigrationToPostgresTests {
    /// What the SQLite lobby of these tests holds.
    struct History {
        let lobby: TestLobby
        let alice: Int64, bob: Int64, carol: Int64
        let game: Int64
        let location: Int64
        let photo: Data
    }

    /// Three players who met, a deleted one, a finished game (results, rewards, unlocks, board
    /// points, events), a photo and a location.
    static func history() async throws -> History {
        let lobby = try await TestLobby(engine: .sqlite)
        let (alice, bob, carol) = try await (lobby.player("alice").id, lobby.player("bob").id, lobby.player("carol").id)
        let dave = try await lobby.player("dave").id
        try await lobby.store.deletePlayer(dave)
        try await lobby.see(carol, "alice")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        let finished = try await lobby.play(game, [alice: [9, 9, 1], bob: [1, 1, 5]])
        #expect(finished.state == .finished && finished.winner == "alice")
        let photo = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0xFF, 0x00, 0x7F])
        _ = try await lobby.store.setPhoto(bob, bytes: photo)
        let location = try await lobby.store.registerLocation(alice, name: "Hall").location.id
        return History(lobby: lobby, alice: alice, bob: bob, carol: carol, game: game, location: location, photo: photo)
    }

    @Test func aMigratedLobbyReadsTheSameAndCarriesOn() async throws {
        let history = try await Self.history()
        let lobby = history.lobby
        let (alice, bob, carol) = (history.alice, history.bob, history.carol)
        // Closed, so that nothing but the migration could touch the file from here on.
        try lobby.store.close()
        let fileBefore = try Self.fingerprint(of: lobby.folder)

        let server = try await PrivatePostgres.shared()
        let url = try await server.createDatabase()
        // Batches of 2: every table of more than two rows goes in several, keyed on its primary key.
        let report = try await LobbyTransfer(from: lobby.path, to: url, batchSize: 2).run()

        #expect(try Self.fingerprint(of: lobby.folder) == fileBefore, "the SQLite file is only read")
        let sqlite = try await lobby.reopen()
        defer { try? sqlite.close() }
        let postgres = try await LobbyStore.open(url, configuration: sqlite.configuration, clock: lobby.clock, poolSize: 2)
        defer { try? postgres.close() }

        // Every table, counted on both sides, with rows where the history put some.
        let counts = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, $0) })
        for table in report.tables { #expect(table.sqliteRows == table.postgresRows, "\(table.name)") }
        #expect(counts["player"]?.postgresRows == 4)
        for table in ["game", "membership", "round", "score", "result", "unlock", "unlockCount", "event", "photo", "location", "encounter", "session"] {
            #expect((counts[table]?.postgresRows ?? 0) > 0, "\(table) has rows to move")
        }
        let sqliteTables = try await sqlite.database.read { db in
            try db.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'")
                .map { try $0.get(0, as: String.self) }
        }
        #expect(Set(report.tables.map(\.name)) == Set(sqliteTables))
        #expect(report.tables.firstIndex { $0.name == "player" }! < report.tables.firstIndex { $0.name == "game" }!)
        #expect(report.tables.firstIndex { $0.name == "round" }! < report.tables.firstIndex { $0.name == "score" }!)
        #expect(report.tables.firstIndex { $0.name == "score" }! < report.tables.firstIndex { $0.name == "recording" }!)

        // Everybody signs in with the password they had, as the same player.
        for (name, id) in [("alice", alice), ("bob", bob), ("carol", carol)] {
            let session = try await postgres.logIn(username: name, password: "password-123")
            #expect(try await postgres.authenticate(token: session.token) == id)
            await #expect(throws: LobbyError.badCredentials) { try await postgres.logIn(username: name, password: "password-124") }
            #expect(try await postgres.player(id) == sqlite.player(id))
        }

        // The game, its rounds and scores; the rewards; the feed with its cursors.
        let game = try await postgres.game(alice, id: history.game)
        #expect(game == (try await sqlite.game(alice, id: history.game)))
        #expect(game.state == .finished && game.winner == "alice" && game.rounds.count == 3)
        #expect(try await postgres.games(bob) == sqlite.games(bob))
        let unlocked = try await postgres.unlocked(alice)
        #expect(unlocked == (try await sqlite.unlocked(alice)))
        #expect(unlocked.contains { $0.username == "bob" })
        for id in [alice, bob, carol] {
            let feed = try await postgres.events(id, after: 0, limit: 1000)
            #expect(feed == (try await sqlite.events(id, after: 0, limit: 1000)), "the events of player \(id)")
            if id != carol { #expect(!feed.isEmpty, "the events of player \(id)") }
        }
        let lastCursor = try #require(try await sqlite.database.read { db in try db.fetchValue(Int64.self, "SELECT MAX(id) FROM event") })

        // Statistics and boards.
        #expect(try await postgres.statistics(viewer: alice, username: "alice") == sqlite.statistics(viewer: alice, username: "alice"))
        #expect(try await postgres.statistics(viewer: alice, username: "bob") == sqlite.statistics(viewer: alice, username: "bob"))
        for board in [BoardKind.allTime, .week, .day] {
            let moved = try await postgres.leaderboard(viewer: bob, board: board)
            #expect(moved == (try await sqlite.leaderboard(viewer: bob, board: board)), "the \(board) board")
            #expect(moved.entries.map(\.username) == ["alice", "bob"], "the \(board) board")
        }
        #expect(try await postgres.stats(viewer: carol, username: "alice") == sqlite.stats(viewer: carol, username: "alice"))

        // The photo (BLOB → BYTEA) and the location.
        let photo = try await postgres.photo(viewer: alice, username: "bob")
        #expect(photo.bytes == history.photo && photo.contentType == "image/png")
        #expect(try await postgres.location(history.location) == sqlite.location(history.location))

        // The unlock triggers are on again: the counts they keep stay right for new unlocks.
        #expect(try await server.psql(Self.database(of: url), "SELECT string_agg(tgname || '=' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "unlock_counted=O,unlock_uncounted=O")

        // New rows get ids after the moved ones: a registration, a location, a game and its events.
        let oldPlayers = try #require(try await sqlite.database.read { db in try db.fetchValue(Int64.self, "SELECT MAX(id) FROM player") })
        let erin = try await postgres.register(Registration(
            username: "erin", firstName: "Erin", lastName: "Last", email: "erin@example.org", password: "password-123"))
        let erinId = try await postgres.authenticate(token: postgres.logIn(username: "erin", password: "password-123").token)
        #expect(erinId > oldPlayers)
        #expect(erin.username == "erin")
        let hall2 = try await postgres.registerLocation(alice, name: "Annex").location.id
        #expect(hall2 > history.location)
        let invitation = try await postgres.invite(alice, usernames: ["bob"])
        #expect(invitation.id > history.game)
        let news = try await postgres.events(bob, after: lastCursor)
        #expect(!news.isEmpty && news.allSatisfy { $0.cursor > lastCursor })
        #expect(report.sequences["player"] == oldPlayers)
        #expect(report.sequences["event"] == lastCursor)
    }

    @Test func refusesADatabaseThatHoldsALobbyAlready() async throws {
        let history = try await Self.history()
        let url = try await PrivatePostgres.shared().createDatabase()
        // A lobby started on the database and used: one player.
        let used = try await LobbyStore.open(url, configuration: history.lobby.store.configuration, clock: history.lobby.clock, poolSize: 1)
        _ = try await used.register(Registration(
            username: "zoe", firstName: "Zoe", lastName: "Last", email: "zoe@example.org", password: "password-123"))
        try used.close()

        let refused = await #expect(throws: LobbyTransfer.Failure.self) { try await LobbyTransfer(from: history.lobby.path, to: url).run() }
        #expect(Self.occupied(refused)?["player"] == 1)
        #expect(Self.occupied(refused)?["game"] == nil)
        #expect(refused?.description.contains("already holds a lobby (1 player, 0 games") == true)

        // A database the first migration filled is refused too, and left as it was.
        let fresh = try await PrivatePostgres.shared().createDatabase()
        let first = try await LobbyTransfer(from: history.lobby.path, to: fresh).run()
        let again = await #expect(throws: LobbyTransfer.Failure.self) { try await LobbyTransfer(from: history.lobby.path, to: fresh).run() }
        #expect(Self.occupied(again)?["player"] == 4)
        #expect(Self.occupied(again)?["game"] == 1)
        #expect(again?.description.contains("4 players, 1 game") == true)
        let moved = try await LobbyStore.open(fresh, configuration: history.lobby.store.configuration, clock: history.lobby.clock, poolSize: 1)
        defer { try? moved.close() }
        let players = try await moved.database.read { db in try db.fetchValue(Int.self, "SELECT COUNT(*) FROM player") }
        #expect(players == first.tables.first { $0.name == "player" }?.postgresRows)
        #expect(players == 4)
    }

    /// A file of an older schema is upgraded on the snapshot, not in place: PostgreSQL gets the
    /// newest shape of its rows, and the file stays as it was for the nearplay that wrote it.
    @Test func anOlderFileMovesUpgradedAndStaysAsItWas() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lobby.sqlite").path
        let v1 = try DatabaseQueue(path: path)
        try LobbyMigrations.migrator.migrate(v1, upTo: "v1: players, sessions, encounters, games, rewards, events")
        try await v1.write { db in
            try db.execute(sql: """
                INSERT INTO player (id, username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, createdAt)
                    VALUES (1, 'alice', 'A', 'L', 'a@example.org', 'x', 1, 0, 0), (2, 'bob', 'B', 'L', 'b@example.org', 'x', 1, 1, 0);
                INSERT INTO game (id, inviterId, state, createdAt, expiresAt, openedAt) VALUES (1, 1, 'open', 0, 86400, 0);
                INSERT INTO membership (gameId, playerId, role, response) VALUES (1, 1, 'inviter', 'accepted'), (1, 2, 'invitee', 'accepted');
                INSERT INTO round (gameId, n, minigame) VALUES (1, 1, 'shake'), (1, 2, 'tilt'), (1, 3, 'shout'), (1, 4, 'quickdraw');
                INSERT INTO score (gameId, n, playerId, score, key, submittedAt) VALUES (1, 1, 1, 40, 'k', 0);
                """)
        }
        try v1.close()
        let before = try Self.fingerprint(of: folder)

        let url = try await PrivatePostgres.shared().createDatabase()
        let report = try await LobbyTransfer(from: path, to: url).run()
        #expect(try Self.fingerprint(of: folder) == before, "the SQLite file is only read")
        let applied = try await DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(applied == ["v1: players, sessions, encounters, games, rewards, events"])

        #expect(report.tables.first { $0.name == "lobbySetting" }?.postgresRows == 1, "v9 marks an upgraded lobby's static identities")
        let postgres = try await LobbyStore.open(url, poolSize: 1)
        defer { try? postgres.close() }
        let rounds = try await postgres.database.read { db in try Query.rounds(db, game: 1) }
        #expect(rounds.map(\.minigame) == ["shaker", "statue", "screamer", "quickdraw"])
        let score = try await postgres.database.read { db in try db.fetchValue(Int.self, "SELECT score FROM score WHERE gameId = 1 AND n = 1") }
        #expect(score == 40)
    }

    @Test func refusesWhatIsNotASQLiteLobbyOrAPostgreSQLAddress() async throws {
        let history = try await Self.history()
        let url = try await PrivatePostgres.shared().createDatabase()
        await #expect(throws: LobbyTransfer.Failure.noSQLiteFile("/nonexistent/lobby.sqlite")) {
            try await LobbyTransfer(from: "/nonexistent/lobby.sqlite", to: url).run()
        }
        await #expect(throws: LobbyTransfer.Failure.notPostgres(history.lobby.path)) {
            try await LobbyTransfer(from: history.lobby.path, to: history.lobby.path).run()
        }
        let empty = history.lobby.folder.appendingPathComponent("empty.sqlite").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        await #expect(throws: LobbyTransfer.Failure.notALobby(empty)) { try await LobbyTransfer(from: empty, to: url).run() }
    }

    /// Each file in `folder` with its bytes, but the `-shm` index, which every reader of a WAL
    /// file writes its read marks in.
    static func fingerprint(of folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasSuffix("-shm") {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    /// The tables a refusal found rows in, when it is that refusal.
    static func occupied(_ failure: LobbyTransfer.Failure?) -> [String: Int]? {
        guard case .targetNotEmpty(let counts) = failure else { return nil }
        return counts
    }

    /// The database name at the end of a PostgreSQL URL.
    static func database(of url: String) -> String { String(url.split(separator: "/").last ?? "") }
}
