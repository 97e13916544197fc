import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// The agent's outbox retries after the lobby restarted: keys survive it, and the live event
/// stream ends with an error when the lobby dies and resumes after the last cursor.
@Suite struct RestartTests {
    @Test(.timeLimit(.minutes(5))) func keysAndTheEventFeedSurviveARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("lobby.sqlite").path

        let first = try await ServerProcess(database: database, folder: folder, arguments: ["--minigames", "statue"])
        var base = LobbyClient(baseURL: first.url)
        for name in ["alice", "bob"] {
            _ = try await base.register(username: name, firstName: "F", lastName: "L", email: "\(name)@example.org", password: "password-123")
        }
        let aliceToken = try await base.logIn(username: "alice", password: "password-123").token
        let bobToken = try await base.logIn(username: "bob", password: "password-123").token
        var alice = base.authenticated(aliceToken)
        var bob = base.authenticated(bobToken)
        let beacon = try await bob.me().beacon
        let sighting = EncounterSighting(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, distance: 1, at: Date())
        let receipt = try await alice.reportEncounters([sighting], key: "report-1")
        // Bob's agent hears alice too: new accounts invite only players met both ways.
        let aliceBeacon = try await alice.me().beacon
        _ = try await bob.reportEncounters([EncounterSighting(uuid: aliceBeacon.uuid, major: aliceBeacon.major, minor: aliceBeacon.minor, distance: 1, at: Date())])
        let invitation = try await alice.invite(["bob"], key: "invite-1")
        _ = try await bob.accept(invitation: invitation.id)
        try await alice.submitHonestly(game: invitation.id, round: 1, score: 321, key: "score-1")

        // Bob listens; the lobby dies under him.
        var live = bob.liveEvents(after: 0).makeAsyncIterator()
        let heard = [try #require(try await live.next()), try #require(try await live.next())]
        #expect(heard.map(\.kind) == ["invitationReceived", "gameStarted"])
        await first.stop(signal: SIGKILL)
        await #expect(throws: (any Error).self) { while try await live.next() != nil {} }

        let second = try await ServerProcess(database: database, folder: folder, arguments: ["--minigames", "statue"])
        base = LobbyClient(baseURL: second.url)
        alice = base.authenticated(aliceToken)
        bob = base.authenticated(bobToken)
        // The outbox sends its unacknowledged requests again: each is answered as the first time.
        #expect(try await alice.reportEncounters([sighting, sighting], key: "report-1") == receipt)
        #expect(try await alice.invite(["bob"], key: "invite-1").id == invitation.id)
        #expect(try await bob.accept(invitation: invitation.id).state == .open)
        let game = try await alice.submitHonestly(game: invitation.id, round: 1, score: 321, key: "score-1")
        #expect(game.rounds[0].scores == ["alice": 321])

        try await bob.submitHonestly(game: invitation.id, round: 1, score: 123, key: "b1")
        let resumed = try await liveEvents(of: bob, after: heard[1].cursor, count: 1)
        #expect(resumed.map(\.kind) == ["roundFinished"])
        #expect(heard + resumed == (try await bob.events(after: 0).events))
        #expect(await second.stop(signal: SIGTERM) == 0)
    }

    @Test func lobbyServeRefusesAnUnknownMinigameNamingIt() async throws {
        let finished = try await SpawnedProcess(try ServerProcess.executable().path,
                                                ["lobby", "serve", "--db", "/nonexistent/lobby.sqlite", "--port", "0", "--minigames", "screamer, Statue,tilt"])
            .finish()
        let text = finished.stderr
        #expect(finished.status != 0)
        #expect(text.contains("--minigames: there is no minigame called \"tilt\""), "\(text)")
    }
}
