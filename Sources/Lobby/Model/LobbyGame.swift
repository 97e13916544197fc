import Foundation
import Minigames

/// A game as its participants see it. Scores are keyed by username; deleted players appear under
/// a placeholder name (see ``DeletedPlayer``).
public struct LobbyGame: Codable, Sendable, Equatable {
    public struct Round: Codable, Sendable, Equatable {
        public var n: Int
        /// The minigame played, a ``Minigames/MinigameCatalog`` name.
        public var game: MinigameName
        /// Seconds the round lasts: the agent records exactly this long.
        public var duration: Double
        /// Always nil since issue 21, point 12: Quickdraw's signal is revealed only when the round
        /// starts (``LobbyStore/revealSignal(_:game:round:)``). Kept so older clients still decode.
        public var signalTime: Double?
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
    /// In the answer to a score submission only: the achievements it granted the submitter.
    public var achievements: [AchievementGrant]? = nil
}

/// A round as announced when its game starts: what to play and the plan to play it on.
public struct PlannedRound: Codable, Sendable, Equatable {
    public var n: Int
    /// The minigame, a ``Minigames/MinigameCatalog`` name.
    public var game: MinigameName
    /// Seconds the round lasts.
    public var duration: Double
    /// Always nil: Quickdraw's signal is revealed when the round starts, not announced.
    public var signalTime: Double?

    public init(n: Int, game: MinigameName, duration: Double, signalTime: Double? = nil) {
        self.n = n
        self.game = game
        self.duration = duration
        self.signalTime = signalTime
    }
}

/// How deleted players are named in games and rounds: a name no live player can have, since
/// usernames cannot contain spaces or parentheses.
public enum DeletedPlayer {
    public static func name(id: Int64) -> String { "(deleted player \(id))" }
}

/// The answer to a score submission.
public struct ScoreReceipt: Sendable {
    public var game: LobbyGame
    /// False when the submission repeated an earlier one with the same key.
    public var created: Bool
}
