import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import LobbyClient
import Minigames
import SensorSamples
import Testing
import enum Lobby.SyntheticRecording
@testable import LobbyServer

/// What the agent relies on, through the real `LobbyClient`: verified scores, the stored
/// calibration, idempotency keys and the live event stream.
@Suite struct AgentSeamTests {
    /// Registers, logs in and makes `inviter` see the others.
    func players(_ base: LobbyClient, _ names: [String]) async throws -> [(client: LobbyClient, beacon: PlayerBeacon)] {
        var players: [(client: LobbyClient, beacon: PlayerBeacon)] = []
        for name in names {
            let player = try await base.register(username: name, firstName: "F", lastName: "L", email: "\(name)@example.org", password: "password-123")
            players.append((base.authenticated(try await base.logIn(username: name, password: "password-123").token), player.beacon))
        }
        let sightings = players.dropFirst().map { EncounterSighting(uuid: $0.beacon.uuid, major: $0.beacon.major, minor: $0.beacon.minor, distance: 1, at: Date()) }
        _ = try await players[0].client.reportEncounters(sightings)
        return players
    }

    @Test func scoresAreVerifiedWithTheStoredCalibration() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            let players = try await players(base, ["alice", "bob"])
            let (alice, bob) = (players[0].client, players[1].client)
            let id = try await alice.invite(["bob"]).id
            _ = try await bob.accept(invitation: id)

            #expect(try await alice.calibration() == nil)
            let calibration = SensorCalibration(accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0.1, 0, 9.79], gravity: 9.79, noise: 0.08))
            #expect(try await alice.setCalibration(calibration) == calibration)
            #expect(try await alice.calibration() == calibration)
            let moving = SensorCalibration(accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0, 0, 9.8], gravity: 9.8, noise: 1))
            let refusedCalibration = await #expect(throws: LobbyClientError.self) { try await alice.setCalibration(moving) }
            #expect(refusedCalibration?.status == 422)
            #expect(refusedCalibration?.code == "calibrationRefused")
            #expect(try await alice.calibration() == calibration)

            let honest = try await alice.honestRecording(game: id, round: 1, score: 450, calibration: calibration)
            let forged = await #expect(throws: LobbyClientError.self) {
                try await alice.submitScore(game: id, round: 1, score: 999, recording: honest, key: "a1")
            }
            #expect(forged?.status == 422)
            #expect(forged?.code == "scoreRefused")
            #expect(forged?.message == ScoreRefusal.scoreMismatch(claimed: 999, recomputed: 450).description)
            // The recording says the device is uncalibrated; the lobby uses the stored calibration.
            let game = try await alice.submitScore(game: id, round: 1, score: 450, recording: honest, key: "a1")
            #expect(game.rounds[0].scores["alice"] == 450)
            #expect(game.rounds[0].duration == 10)
            #expect(game.rounds[0].signalTime == nil)
            #expect(try await alice.submitScore(game: id, round: 1, score: 450, recording: honest, key: "a1") == game)

            let shaking = try #require(SyntheticRecording.scoring(100, game: "shaker", duration: 10))
            let wrongGame = await #expect(throws: LobbyClientError.self) {
                try await bob.submitScore(game: id, round: 1, score: 100, recording: shaking, key: "b1")
            }
            #expect(wrongGame?.status == 422)
            #expect(wrongGame?.message.contains("shaker") == true)
        }
    }

    @Test func invitationsAndEncounterReportsAreIdempotentByKey() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            let players = try await players(base, ["alice", "bob", "carol"])
            let (alice, bob) = (players[0].client, players[1].client)
            let carol = players[2].beacon
            let report = [EncounterSighting(uuid: carol.uuid, major: carol.major, minor: carol.minor, distance: 2, at: Date())]
            let receipt = try await bob.reportEncounters(report, key: "bob-report-1")
            #expect(receipt.recorded == 1)
            #expect(try await bob.reportEncounters(report + report, key: "bob-report-1") == receipt)

            let first = try await alice.invite(["bob", "nobody"], key: "alice-outbox-7")
            let again = try await alice.invite(["bob", "nobody"], key: "alice-outbox-7")
            #expect(again == first)
            #expect(again.excluded.map(\.reason) == [.unknownPlayer])
            #expect(try await bob.invitations().count == 1)
            // Over HTTP: 201 the first time, 200 for the repeat.
            let token = try await base.logIn(username: "alice", password: "password-123").token
            var request = HTTPClientRequest(url: base.baseURL + "/v1/invitations")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.body = .bytes(ByteBuffer(string: #"{"invitees":["bob","nobody"],"key":"alice-outbox-7"}"#))
            #expect(try await HTTPClient.shared.execute(request, timeout: .seconds(30)).status == .ok)

            let accepted = try await bob.accept(invitation: first.id)
            #expect(try await bob.accept(invitation: first.id) == accepted)
            let changed = await #expect(throws: LobbyClientError.self) { try await bob.decline(invitation: first.id) }
            #expect(changed?.status == 409)
        }
    }

    @Test(.timeLimit(.minutes(5))) func liveEventsResumeAfterACursorMissingNothingAndRepeatingNothing() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            let players = try await players(base, ["alice", "bob"])
            let (alice, bob) = (players[0].client, players[1].client)
            var id: Int64 = 0
            let invited = try await liveEvents(of: bob, after: 0, count: 1) { id = try await alice.invite(["bob"], key: "i1").id }
            #expect(invited.map(\.kind) == ["invitationReceived"])
            try #require(invited.count == 1)
            #expect(invited[0].data.game == id)
            #expect(invited[0].data.player == "alice")

            let started = try await liveEvents(of: bob, after: invited[0].cursor, count: 2) {
                _ = try await bob.accept(invitation: id)
                try await alice.submitHonestly(game: id, round: 1, score: 700, key: "a1")
                try await bob.submitHonestly(game: id, round: 1, score: 300, key: "b1")
            }
            #expect(started.map(\.kind) == ["gameStarted", "roundFinished"])
            try #require(started.count == 2)
            #expect(started[0].data.participants == ["alice", "bob"])
            let game = try await bob.game(id)
            #expect(started[0].data.rounds == game.rounds.map { LobbyEvent.PlannedRound(n: $0.n, game: $0.game, duration: $0.duration, signalTime: $0.signalTime) })
            #expect(started[1].data.scores == ["alice": 700, "bob": 300])
            #expect(started[1].data.winner == "alice")

            // While nobody listens, the game ends.
            for n in 2...3 {
                try await alice.submitHonestly(game: id, round: n, score: 100, key: "a\(n)")
                try await bob.submitHonestly(game: id, round: n, score: 200 * n, key: "b\(n)")
            }
            let resumed = try await liveEvents(of: bob, after: started[1].cursor, count: 5)
            #expect(resumed.map(\.kind) == ["roundFinished", "roundFinished", "gameFinished", "unlocked", "achievementUnlocked"])
            try #require(resumed.count == 5)
            #expect(resumed.map(\.data.round) == [2, 3, nil, nil, nil])
            #expect(resumed[4].data.achievement == "firstWin")
            #expect(resumed[2].data.winner == "bob")
            let feed = try await bob.events(after: 0).events
            #expect(invited + started + resumed == feed)
            // And events that happen while listening follow without a repeat.
            let next = try await liveEvents(of: bob, after: resumed[4].cursor, count: 1) {
                _ = try await alice.reportEncounters([EncounterSighting(uuid: players[1].beacon.uuid, major: players[1].beacon.major, minor: players[1].beacon.minor, distance: 1, at: Date())])
                _ = try await alice.invite(["bob"])
            }
            #expect(next.map(\.kind) == ["invitationReceived"])
            #expect(next.first.map { $0.cursor > resumed[4].cursor } == true)
        }
    }

    @Test(.timeLimit(.minutes(5))) func liveEventsEndWithAnErrorWhenTheTokenIsRefused() async throws {
        let server = try await TestServer()
        try await server.application.test(.live) { testClient in
            let stranger = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))").authenticated("not-a-token")
            await #expect(throws: (any Error).self) {
                for try await _ in stranger.liveEvents(after: 0) {}
            }
        }
    }
}
