import Foundation
import GRDB
import Minigames
import SensorSamples
import Testing
@testable import Lobby

/// Issue 21, point 12, where the rules live: calibrations bounded and rate-limited, Quickdraw's
/// signal revealed at the round's start and the reaction held to the lobby's clock, histories
/// flagged and a flagged winner's tournament rewards held until an operator clears it.
@Suite struct ScoreIntegrityTests {
    static func microphone(_ floor: Double) -> SensorCalibration {
        SensorCalibration(microphone: MicrophoneCalibration(pcm: "default", noiseFloorDBFS: floor))
    }

    @Test func refusesANoiseFloorQuieterThanADeviceInARoomMeasures() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, Self.microphone(-90)) }
        #expect(error?.code == .calibrationRefused)
        #expect(error?.message.contains("-90.0 dBFS") == true)
        #expect(error?.message.contains("nearplay calibrate sensors") == true)
        let silent = SensorCalibration(accelerometer: AccelerometerCalibration(device: "d", rest: [0, 0, 9.8], gravity: 9.8, noise: 0))
        await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, silent) }
        #expect(try await lobby.store.setCalibration(alice, Self.microphone(-80)) == Self.microphone(-80))
    }

    @Test func limitsCalibrationChangesToAFewADay() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        for floor in [-70.0, -65, -60] {
            try await lobby.store.setCalibration(alice, Self.microphone(floor))
            lobby.clock.advance(by: 60)
        }
        // The same calibration again (an agent starting) changes nothing and is not counted.
        for _ in 0..<5 { try await lobby.store.setCalibration(alice, Self.microphone(-60)) }
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, Self.microphone(-75)) }
        #expect(error?.kind == .conflict)
        #expect(error?.code == .calibrationChangeLimit)
        #expect(error?.message.contains("3 times in the last 24 hours") == true)
        #expect(try await lobby.store.calibration(alice) == Self.microphone(-60), "the refused one is not stored")
        // A day after the first change, one more is allowed.
        lobby.clock.advance(by: 24 * 3600 - 179)
        #expect(try await lobby.store.setCalibration(alice, Self.microphone(-75)) == Self.microphone(-75))
        await #expect(throws: LobbyError.self) { try await lobby.store.setCalibration(alice, Self.microphone(-72)) }
    }

    func quickdrawGame() async throws -> (TestLobby, alice: Int64, game: Int64) {
        let lobby = try await TestLobby { $0.enabledMinigames = ["quickdraw"] }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        return (lobby, alice, try await lobby.openGame(alice, with: [(bob, "bob")]))
    }

    @Test func aQuickdrawScoreNeedsTheSignalRevealed() async throws {
        let (lobby, alice, game) = try await quickdrawGame()
        #expect(try await lobby.store.game(alice, id: game).rounds.allSatisfy { $0.signalTime == nil })
        // The recording reacts 0.2 s after the signal the lobby drew, which the client never asked for.
        let recording = try await lobby.recording(game: game, round: 1, score: 929)
        lobby.clock.advance(by: 60)
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: 929, key: "q1", recording: recording)
        }
        #expect(error?.kind == .refused)
        #expect(error?.code == .signalNotRevealed)
        // Moving early scores 0, which needs no signal: a player who did not play loses nothing.
        #expect(try await lobby.store.submitScore(alice, game: game, round: 2, score: 0, key: "q2",
                                                  recording: try await lobby.recording(game: game, round: 2, score: 0)).created)
    }

    @Test func aQuickdrawReactionIsHeldToTheLobbysClockOfTheReveal() async throws {
        let (lobby, alice, game) = try await quickdrawGame()
        let reveal = try await lobby.store.revealSignal(alice, game: game, round: 1)
        #expect(abs(reveal.revealedAt.timeIntervalSince(lobby.clock.now())) < 0.001)
        let recording = try await lobby.recording(game: game, round: 1, score: 929)
        let reaction = try #require(Quickdraw().score(recording).details["reaction_s"])
        // Sent right after the signal the lobby revealed: the reaction has not happened yet.
        lobby.clock.advance(by: reveal.signalTime + reaction - 0.1)
        let early = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitScore(alice, game: game, round: 1, score: 929, key: "q1", recording: recording)
        }
        #expect(early?.code == .reactionBeforeSignal)
        // Asking again answers the first reveal: the clock cannot be restarted.
        #expect(try await lobby.store.revealSignal(alice, game: game, round: 1) == reveal)
        // Within the stated tolerance, and after it, the score stands.
        lobby.clock.advance(by: 0.1 - LobbyStore.reactionClockTolerance + 0.001)
        #expect(try await lobby.store.submitScore(alice, game: game, round: 1, score: 929, key: "q1", recording: recording).created)
    }

    @Test func onlyQuickdrawRoundsHaveASignalToReveal() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.revealSignal(alice, game: game, round: 1) }
        #expect(error?.code == .noSignal)
        #expect(error?.message.contains("statue") == true)
        let (carol, _) = try await lobby.player("carol")
        let stranger = await #expect(throws: LobbyError.self) { try await lobby.store.revealSignal(carol, game: game, round: 1) }
        #expect(stranger?.code == .gameNotFound)
    }

    @Test func syntheticRecordingsCarryASensorsFingerprintAndScriptedOnesDoNot() throws {
        for (game, score, duration, signal) in [(MinigameName.statue, 700, 10.0, nil), ("screamer", 400, 5, nil), ("shaker", 200, 10, nil), ("quickdraw", 600, 8, 3.0)] {
            let honest = try #require(SyntheticRecording.scoring(score, game: game, duration: duration, signalTime: signal))
            #expect(SensorFingerprint.missing(in: honest) == nil, "\(game)")
        }
        let periodic = RoundRecording(game: "statue", duration: 10, accelerations: (0..<1000).map {
            AccelerationSample(time: Double($0) / 100, x: 0.01 * sin(Double($0)), y: 0, z: standardGravity)
        })
        #expect(SensorFingerprint.missing(in: periodic)?.contains("exactly 10.0 ms apart") == true)
        let flat = RoundRecording(game: "screamer", duration: 5, levels: (1...100).map {
            LevelSample(time: Double($0) * 0.05, rmsDBFS: $0 == 50 ? -10 : -62, peakDBFS: $0 == 50 ? -7 : -59)
        })
        #expect(SensorFingerprint.missing(in: flat)?.contains("repeat the level before them exactly") == true)
    }

    @Test func scrutinyFlagsTheCeilingOfEveryGameAndRecordingsWithoutAFingerprint() {
        let scrutiny = ScoreScrutiny()
        let ceiling = (0..<6).map { ScoreScrutiny.Entry(minigame: ["statue", "shaker", "screamer"][$0 % 3], score: 960 + $0) }
        #expect(scrutiny.findings(ceiling).map(\.reason) == [.ceiling])
        #expect(scrutiny.findings(Array(ceiling.prefix(5))).isEmpty, "five scores are a good day")
        #expect(scrutiny.findings(ceiling.map { ScoreScrutiny.Entry(minigame: "statue", score: $0.score) }).isEmpty,
                "one game at the ceiling is a device on a table")
        #expect(scrutiny.findings(ceiling + [ScoreScrutiny.Entry(minigame: "shaker", score: 600)]).isEmpty)
        let scripted = (0..<4).map { ScoreScrutiny.Entry(minigame: "statue", score: 500, unfingerprinted: $0 < 3 ? "periodic \($0)" : nil) }
        let found = scrutiny.findings(scripted)
        #expect(found.map(\.reason) == [.noSensorFingerprint])
        #expect(found.first?.details.contains("3 of the last 4") == true)
        #expect(found.first?.details.contains("periodic 2") == true)
        #expect(scrutiny.findings(scripted + Array(repeating: ScoreScrutiny.Entry(minigame: "statue", score: 500), count: 3)).isEmpty,
                "three odd recordings among seven are not half")
    }

    /// Plays `rounds` games of three rounds between `player` and `opponent`, the player scoring
    /// 960 in Shaker and 980 elsewhere.
    func playAtTheCeiling(_ lobby: TestLobby, _ player: Int64, against opponent: (id: Int64, name: String), games: Int) async throws {
        for index in 0..<games {
            let game = try await lobby.openGame(player, with: [opponent])
            for round in try await lobby.store.game(player, id: game).rounds {
                try await lobby.submit(player, game: game, round: round.n, score: round.game == "shaker" ? 960 : 980, key: "p\(index)-\(round.n)")
                try await lobby.submit(opponent.id, game: game, round: round.n, score: round.game == "shaker" ? 100 : 120, key: "o\(index)-\(round.n)")
            }
        }
    }

    @Test func aFlaggedWinnersTournamentRewardsAreHeldUntilAnOperatorClearsIt() async throws {
        let lobby = try await TestLobby { $0.enabledMinigames = ["statue", "shaker", "screamer"] }
        let (owner, alice, bob, carol, dave) = try await (lobby.player("owner").id, lobby.player("alice").id, lobby.player("bob").id,
                                                           lobby.player("carol").id, lobby.player("dave").id)
        try await playAtTheCeiling(lobby, alice, against: (carol, "carol"), games: 1)
        #expect(try await lobby.store.flaggedPlayers().isEmpty, "three ceiling scores are not yet a pattern")
        try await playAtTheCeiling(lobby, alice, against: (carol, "carol"), games: 1)
        let flagged = try await lobby.store.flaggedPlayers()
        #expect(flagged.map(\.username) == ["alice"])
        #expect(flagged.first?.flags.map(\.reason) == [.ceiling])
        #expect(flagged.first?.flags.first?.details.contains("all of the last 6 scores are 950 or more") == true)
        // Bob has unlocked Dave, which a tournament's winner takes.
        _ = try await lobby.play(try await lobby.openGame(bob, with: [(dave, "dave")]), [bob: [600, 600, 600], dave: [100, 100, 100]])
        #expect(try await lobby.unlocked(bob)["dave"] != nil)

        let hall = try await lobby.store.registerLocation(owner, name: "Hall").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        for player in [alice, bob] {
            try await lobby.see(player, location: hall)
            _ = try await lobby.store.joinTournament(player, tournament: daily.id)
        }
        for n in 1...3 {
            try await lobby.submit(alice, tournament: daily.id, round: n, score: 900, key: "a\(n)")
            try await lobby.submit(bob, tournament: daily.id, round: n, score: 300, key: "b\(n)")
        }
        lobby.clock.advance(by: daily.endsAt.timeIntervalSince(lobby.clock.now()) + 1)
        let sweep = try await lobby.store.settleTournaments()
        #expect(sweep.closed.first { $0.tournament == daily.id }?.winner == alice, "a flagged player still wins on its scores")
        #expect(try await lobby.unlocked(alice)["dave"] == nil, "the reward is held")
        #expect(try await lobby.store.flaggedPlayers().first?.heldTournaments == [daily.id])

        let clearance = try await lobby.store.clearFlags(username: "alice", by: "ops")
        #expect(clearance == FlagClearance(username: "alice", cleared: [.ceiling], releasedTournaments: [daily.id]))
        #expect(try await lobby.unlocked(alice)["dave"] == true, "cleared, she gets what she won, for good")
        #expect(try await lobby.store.flaggedPlayers().isEmpty)
        let again = await #expect(throws: LobbyError.self) { try await lobby.store.clearFlags(username: "alice", by: "ops") }
        #expect(again?.code == .notFlagged)
        // The history before the clearance is forgiven: three more ceiling scores do not flag her again.
        try await playAtTheCeiling(lobby, alice, against: (carol, "carol"), games: 1)
        #expect(try await lobby.store.flaggedPlayers().isEmpty)
    }

    @Test func recordingsWithoutAFingerprintFlagTheirPlayer() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        for n in 1...3 {
            // A script's recording: 100 Hz exactly, a made-up wobble.
            let scripted = RoundRecording(game: "statue", duration: 10, accelerations: (0..<1000).map {
                AccelerationSample(time: Double($0) / 100, x: 0.05 * sin(Double($0) * 0.9), y: 0, z: standardGravity)
            })
            let score = Statue().score(scripted).score
            #expect(try await lobby.store.submitScore(alice, game: game, round: n, score: score, key: "s\(n)", recording: scripted).created, "each one alone is plausible")
        }
        let flagged = try await lobby.store.flaggedPlayers()
        #expect(flagged.first?.username == "alice")
        #expect(flagged.first?.flags.map(\.reason) == [.noSensorFingerprint])
        #expect(flagged.first?.flags.first?.details.contains("exactly 10.0 ms apart") == true)
    }
}
