import Foundation

/// A game as its participants see it. Scores are keyed by username; deleted players appear under
/// a placeholder name (see ``DeletedPlayer``).
public struct Game: Codable, Sendable, Equatable {
    public struct Round: Codable, Sendable, Equatable {
        public var n: Int
        public var game: String
        public var scores: [String: Int]
        /// The highest scorer, once everybody played; nil while playing or on a tie.
        public var winner: String?
    }

    public var id: Int64
    public var state: GameState
    public var inviter: String
    public var participants: [String]
    public var rounds: [Round]
    public var winner: String?
    public var createdAt: Date
    public var finishedAt: Date?
}

/// How deleted players are named in games and rounds: a name no live player can have, since
/// usernames cannot contain spaces or parentheses.
public enum DeletedPlayer {
    public static func name(id: Int64) -> String { "(deleted player \(id))" }
}

/// The answer to a score submission.
public struct ScoreReceipt: Sendable {
    public var game: Game
    /// False when the submission repeated an earlier one with the same key.
    public var created: Bool
}
