import BeaconFrames
import Foundation
import GRDB
import Minigames
import SensorSamples
import Testing
@testable import Lobby

@Suite struct MinigameVocabularyTests {
    @Test func theLobbyProposesTheCatalogsMinigames() throws {
        #expect(LobbyConfiguration().enabledMinigames == MinigameCatalog.names)
        #expect(try LobbyConfiguration.minigames(["Statue", "quickdraw", "statue"]) == ["statue", "quickdraw"])
    }

    @Test func refusesAnUnknownMinigameNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-vocabulary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = #expect(throws: LobbyError.self) {
            try LobbyStore(path: folder.appendingPathComponent("lobby.sqlite").path,
                           configuration: LobbyConfiguration(enabledMinigames: ["statue", "shake"]))
        }
        #expect(error?.kind == .invalidInput)
        #expect(error?.message.hasPrefix("enabledMinigames") == true)
        #expect(error?.message.contains("\"shake\"") == true)
        #expect(throws: LobbyError.self) { try LobbyConfiguration.minigames([]) }
    }

    /// Issue 21, point 12: the plan no longer carries Quickdraw's signal; it is revealed when the
    /// round starts (this test's signal was in the plan before).
    @Test func quickdrawPlansHideTheSignalTheLobbyDrewAndTheStartAnnouncesThePlan() async throws {
        let lobby = try await TestLobby { $0.enabledMinigames = ["quickdraw"] }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let id = try await lobby.openGame(alice, with: [(bob, "bob")])
        let game = try await lobby.store.game(bob, id: id)
        #expect(game.rounds.count == 3)
        var signals: Set<Double> = []
        for round in game.rounds {
            #expect(round.game == "quickdraw")
            #expect(round.duration == Quickdraw().duration)
            #expect(round.signalTime == nil)
            let reveal = try await lobby.store.revealSignal(bob, game: id, round: round.n)
            #expect(Quickdraw().signalDelay.contains(reveal.signalTime))
            signals.insert(reveal.signalTime)
        }
        #expect(signals.count == 3, "each round draws its own signal")
        let started = try await lobby.store.events(bob, after: 0).first { $0.kind == .gameStarted }
        #expect(started?.data.participants == ["alice", "bob"])
        #expect(started?.data.rounds == game.rounds.map { PlannedRound(n: $0.n, game: $0.game, duration: $0.duration, signalTime: $0.signalTime) })
    }
}

@Suite struct ScoreVerificationTests {
    func openGame(_ configure: @escaping (inout LobbyConfiguration) -> Void = { _ in }) async throws -> (TestLobby, alice: Int64, bob: Int64, game: Int64) {
        let lobby = try await TestLobby(configure)
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        return (lobby, alice, bob, try await lobby.openGame(alice, with: [(bob, "bob")]))
    }

    @Test func acceptsAnHonestScoreAndKeepsTheRecordingAsVerified() async throws {
        let (lobby, alice, _, game) = try await openGame()
        var recording = try await lobby.recording(game: game, round: 1, score: 640)
        recording.duration = 9  // the lobby plays the round on its own plan
        let receipt = try await lobby.store.submitScore(alice, game: game, round: 1, score: 640, key: "a1", recording: recording)
        #expect(receipt.created)
        #expect(receipt.game.rounds[0].scores["alice"] == 640)
        let stored = try #require(try await lobby.store.recording(alice, game: game, round: 1))
        #expect(stored.duration == 10)
        #expect(stored.accelerations == recording.accelerations)
        #expect(stored.calibration == SensorCalibration())
    }

    @Test func refusesAForgedScoreSayingWhy() async throws {
        let (lobby, alice, _, game) = try await openGame()
        let recording = try await lobby.recording(game: game, round: 1, score: 300)
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: 1000, key: "a1", recording: recording)
        }
        #expect(error?.kind == .refused)
        #expect(error?.code == .scoreRefused)
        #expect(error?.message == ScoreRefusal.scoreMismatch(claimed: 1000, recomputed: 300).description)
        // Nothing was stored: the honest claim still goes through.
        #expect(try await lobby.store.submitScore(alice, game: game, round: 1, score: 300, key: "a1", recording: recording).created)
    }

    @Test func refusesARecordingOfAnotherGame() async throws {
        let (lobby, alice, _, game) = try await openGame()
        let shaking = try #require(SyntheticRecording.scoring(200, game: "shaker", duration: 10))
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: 200, key: "a1", recording: shaking)
        }
        #expect(error?.code == .scoreRefused)
        #expect(error?.message.contains("\"shaker\"") == true)
        #expect(error?.message.contains("statue") == true)
    }

    @Test func verifiesWithTheStoredCalibrationNotTheClients() async throws {
        let (lobby, alice, _, game) = try await openGame()
        await #expect(throws: LobbyError.self) { try await lobby.store.calibration(alice) }
        let stored = SensorCalibration(accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0, 0, 9.8], gravity: 9.8, noise: 0.1))
        try await lobby.store.setCalibration(alice, stored)
        #expect(try await lobby.store.calibration(alice) == stored)
        // 0.01, not 0 as before issue 21's point 12: no real chip reports no noise, so no lobby stores it.
        let claimed = SensorCalibration(accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0, 0, 9.8], gravity: 9.8, noise: 0.01))

        // Scored with the client's calibration (less noise allowed, so a lower score): refused.
        let clients = try await lobby.recording(game: game, round: 1, score: 500, calibration: claimed)
        let refused = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: 500, key: "a1", recording: clients)
        }
        #expect(refused?.code == .scoreRefused)
        // Scored with the stored one, whatever calibration the recording carries: accepted.
        var honest = try await lobby.recording(game: game, round: 1, score: 500, calibration: stored)
        honest.calibration = claimed
        #expect(try await lobby.store.submitScore(alice, game: game, round: 1, score: 500, key: "a1", recording: honest).created)
        #expect(try await lobby.store.recording(alice, game: game, round: 1)?.calibration == stored)
        // A retry with the same key is answered even after the calibration changed.
        try await lobby.store.setCalibration(alice, claimed)
        #expect(try await !lobby.store.submitScore(alice, game: game, round: 1, score: 500, key: "a1", recording: honest).created)
    }

    @Test func refusesACalibrationNoDeviceAtRestGives() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let moving = SensorCalibration(accelerometer: AccelerometerCalibration(device: "d", rest: [0, 0, 9.8], gravity: 9.8, noise: 0.5))
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, moving) }
        #expect(error?.kind == .refused)
        #expect(error?.code == .calibrationRefused)
        #expect(error?.message.contains("0.5") == true)
        let loud = SensorCalibration(microphone: MicrophoneCalibration(pcm: "default", noiseFloorDBFS: -5))
        await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, loud) }
        await #expect(throws: LobbyError.self) { try await lobby.store.calibration(alice) }
    }

    @Test func verifiesQuickdrawOnTheSignalTheLobbyIssued() async throws {
        let (lobby, alice, _, game) = try await openGame { $0.enabledMinigames = ["quickdraw"] }
        let issued = try await lobby.store.revealSignal(alice, game: game, round: 1).signalTime
        lobby.clock.advance(by: Quickdraw().duration)
        // A reaction 0.3 s after the issued signal, sent with a signal moved by a second.
        var recording = try await lobby.recording(game: game, round: 1, score: 857)
        let moved = issued > 3.5 ? issued - 1 : issued + 1
        recording.signalTime = moved
        let asSent = Quickdraw().score(recording).score
        #expect(asSent != 857)
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: asSent, key: "q1", recording: recording)
        }
        #expect(error?.code == .scoreRefused)
        #expect(try await lobby.store.submitScore(alice, game: game, round: 1, score: 857, key: "q1", recording: recording).created)
        #expect(try await lobby.store.recording(alice, game: game, round: 1)?.signalTime == issued)
    }

    @Test func everyMinigameCanBePlayedHonestly() async throws {
        for (name, score) in [(MinigameName.screamer, 421), ("shaker", 340), ("statue", 77), ("quickdraw", 512), ("quickdraw", 0)] {
            let (lobby, alice, _, game) = try await openGame { $0.enabledMinigames = [name] }
            let receipt = try await lobby.submit(alice, game: game, round: 2, score: score, key: "k")
            #expect(receipt.game.rounds[1].scores["alice"] == score, "\(name)")
        }
    }
}

@Suite struct RequestKeyTests {
    @Test func aRepeatedInvitationKeyCreatesNothingEvenAfterARestart() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.see(alice, "bob")
        let first = try await lobby.store.invite(alice, usernames: ["bob", "ghost"], key: "outbox-1")
        #expect(first.created)
        let again = try await lobby.store.invite(alice, usernames: ["bob", "ghost"], key: "outbox-1")
        #expect(!again.created)
        #expect(again.invitation == first.invitation)
        // Another key is another invitation (refused here: bob already has one from alice).
        await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["bob"], key: "outbox-2") }

        let reopened = try await lobby.reopen()
        let afterRestart = try await reopened.invite(alice, usernames: ["bob", "ghost"], key: "outbox-1")
        #expect(!afterRestart.created)
        #expect(afterRestart.invitation.id == first.invitation.id)
        #expect(afterRestart.invitation.excluded == [ExcludedInvitee(username: "ghost", reason: .unknownPlayer)])
        #expect(try await reopened.database.read { db in try db.fetchValue(Int.self, "SELECT COUNT(*) FROM game") } == 1)
        #expect(try await reopened.events(bob, after: 0).count == 1)
    }

    @Test func keysAreBoundedAndPerPlayer() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (carol, _) = try await lobby.player("carol")
        try await lobby.player("bob")
        try await lobby.see(alice, "bob")
        try await lobby.see(carol, "bob")
        for key in ["", String(repeating: "k", count: 129)] {
            let error = await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["bob"], key: key) }
            #expect(error?.message.hasPrefix("key") == true)
            await #expect(throws: LobbyError.self) { try await lobby.store.recordEncounters(reporter: alice, [], key: key) }
        }
        let mine = try await lobby.store.invite(alice, usernames: ["bob"], key: String(repeating: "k", count: 128))
        let theirs = try await lobby.store.invite(carol, usernames: ["bob"], key: String(repeating: "k", count: 128))
        #expect(mine.created && theirs.created)
        #expect(mine.invitation.id != theirs.invitation.id)
    }

    @Test func aRepeatedEncounterReportRecordsNothingTwice() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let bob = try await lobby.player("bob").player.beacon
        let seenAt = lobby.clock.now()
        let report = [EncounterReport(bob, distance: 1.5, at: seenAt),
                      EncounterReport(BeaconIdentity(uuid: bob.uuid, major: 4242, minor: 1)!, distance: nil, at: seenAt)]
        let first = try await lobby.store.recordEncounters(reporter: alice, report, key: "r1")
        #expect(first == EncounterReceipt(recorded: 1, ignored: 1))
        lobby.clock.advance(by: 60)
        let later = [EncounterReport(bob, distance: 9, at: lobby.clock.now())]
        #expect(try await lobby.store.recordEncounters(reporter: alice, later, key: "r1") == first)
        let reopened = try await lobby.reopen()
        #expect(try await reopened.recordEncounters(reporter: alice, later, key: "r1") == first)
        let row = try await reopened.database.read { db in try db.fetchOne("SELECT lastSeenAt, distance FROM encounter") }
        #expect(try row?.get(0, as: Double.self) == seenAt.timeIntervalSince1970)
        #expect(try row?.get(1, as: Double.self) == 1.5)
        // Keys are forgotten after their lifetime.
        lobby.clock.advance(by: lobby.store.configuration.requestKeyLifetime + 1)
        try await reopened.pruneRequestKeys()
        // (Bob's identity has rotated since: the one he advertises now.)
        let current = try await lobby.beacon(of: "bob")
        let now = [EncounterReport(current, distance: 9, at: lobby.clock.now())]
        reopened.noteActive(try #require(try await lobby.store.database.read { db in try Query.player(db, username: "bob") }?.id))
        #expect(try await reopened.recordEncounters(reporter: alice, now, key: "r1") == EncounterReceipt(recorded: 1, ignored: 0))
    }

    @Test func answeringAgainWithTheSameAnswerIsAnsweredAndAnotherIsRefused() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        try await lobby.see(alice, "bob")
        try await lobby.see(alice, "carol")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob", "carol"])
        let accepted = try await lobby.store.accept(bob, invitation: invitation.id)
        #expect(try await lobby.store.accept(bob, invitation: invitation.id) == accepted)
        let changed = await #expect(throws: LobbyError.self) { try await lobby.store.decline(bob, invitation: invitation.id) }
        #expect(changed?.code == .invitationClosed)
        let declined = try await lobby.store.decline(carol, invitation: invitation.id)
        #expect(declined.state == .open)
        #expect(try await lobby.store.decline(carol, invitation: invitation.id).state == .open)
        await #expect(throws: LobbyError.self) { try await lobby.store.accept(carol, invitation: invitation.id) }
        // Nothing was announced twice.
        #expect(try await lobby.store.events(alice, after: 0).filter { $0.kind == .invitationAnswered }.count == 2)
    }

    @Test func anInviteeWhoDidNotAnswerHearsTheInvitationExpired() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        try await lobby.see(alice, "bob")
        try await lobby.see(alice, "carol")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob", "carol"])
        _ = try await lobby.store.accept(bob, invitation: invitation.id)
        lobby.clock.advance(by: 24 * 3600)
        try await lobby.store.expireInvitations()
        let carolsEvents = try await lobby.store.events(carol, after: 0)
        #expect(carolsEvents.map(\.kind) == [.invitationReceived, .invitationExpired])
        #expect(carolsEvents.last?.data.game == invitation.id)
        #expect(try await lobby.store.events(bob, after: 0).map(\.kind) == [.invitationReceived, .gameStarted])
    }
}
