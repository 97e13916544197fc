/// A round's score and the figures behind it (`nearplay practice --json` prints it).
public struct GameScore: Equatable, Codable, Sendable {
    public var game: MinigameName
    /// 0...1000 for every game.
    public var score: Int
    /// Named figures that explain the score, e.g. `loudest_dbfs` or `shakes`.
    public var details: [String: Double]

    public init(game: MinigameName, score: Int, details: [String: Double] = [:]) {
        self.game = game
        self.score = min(1000, max(0, score))
        self.details = details
    }
}

/// A round's scores by username, as the lobby's games and events carry them.
public typealias ScoresByPlayer = [String: Int]
