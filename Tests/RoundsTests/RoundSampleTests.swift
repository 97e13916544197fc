import Foundation
import Minigames
import Rounds
import Sensors
import Testing

/// The committed round inputs under Samples/rounds/ (written by scripts/make-round-samples),
/// which the demo and the end-to-end tests play: every round verifies and scores, and the two
/// players score differently.
struct RoundSampleTests {
    static let players = ["alice", "bob"]
    static let games: [any Minigame] = [Screamer(), Shaker(), Statue()]
    static let folder = repositoryRoot.appendingPathComponent("Samples/rounds")

    /// Plays `player`'s sample of `game` as the agent would, and verifies the score.
    static func score(_ player: String, _ game: any Minigame) async throws -> GameScore {
        let file = folder.appendingPathComponent(player).appendingPathComponent(game.name.rawValue).path
        let sensors = game.sensors.contains(.microphone)
            ? SensorSetup(audioFile: file + ".raw") : SensorSetup(accelFile: file + ".jsonl")
        var generator: any RandomNumberGenerator = SystemRandomNumberGenerator()
        let plan = game.plan(using: &generator)
        let recording = try await RoundRunner(sensors: sensors).play(game, plan: plan, calibration: SensorCalibration())
        return try ScoreVerifier().verify(claimedScore: game.score(recording).score, recording: recording)
    }

    @Test(arguments: players, games.map(\.name))
    func everySampleVerifiesAndScores(_ player: String, _ name: MinigameName) async throws {
        let score = try await Self.score(player, try #require(MinigameCatalog.game(named: name)))
        #expect(score.score >= 100, "\(player)'s \(name) round scores \(score.score)")
    }

    @Test func thePlayersScoreDifferently() async throws {
        var scores: [String: [MinigameName: Int]] = [:]
        for player in Self.players {
            for game in Self.games {
                scores[player, default: [:]][game.name] = try await Self.score(player, game).score
            }
        }
        let alice = try #require(scores["alice"]), bob = try #require(scores["bob"])
        #expect(alice["screamer"]! > bob["screamer"]!, "\(scores)")
        #expect(alice["shaker"]! > bob["shaker"]!, "\(scores)")
        #expect(bob["statue"]! > alice["statue"]!, "\(scores)")
        // The figures the README gives: a change to the samples or the scoring shows here.
        #expect(alice == ["screamer": 499, "shaker": 880, "statue": 428])
        #expect(bob == ["screamer": 114, "shaker": 400, "statue": 876])
    }

    /// Quickdraw's signal time is the lobby's, so no file can hold a reaction to it.
    @Test func thereIsNoQuickdrawSample() {
        for player in Self.players {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: Self.folder.appendingPathComponent(player).path)) ?? []
            #expect(files.sorted() == ["screamer.raw", "shaker.jsonl", "statue.jsonl"])
        }
    }
}
