import Foundation

/// Something that happened to a player, in the order it happened. `cursor` increases; read the
/// feed after the last cursor seen to catch up.
public struct LobbyEvent: Codable, Sendable, Equatable {
    /// What happened. The data each kind carries:
    /// - `invitationReceived`: `game`, `player` (the inviter);
    /// - `invitationAnswered` (to the inviter): `game`, `player` (the invitee), `response`;
    /// - `invitationExpired` (to an invitee who did not answer in time): `game`;
    /// - `gameStarted`: `game`, `participants`, `rounds` (minigame, duration, signal time);
    /// - `gameCancelled`: `game`;
    /// - `roundFinished`: `game`, `round`, `scores`, `winner` (nil on a tie);
    /// - `gameFinished`: `game`, `winner` (nil on a draw);
    /// - `unlocked`: `player`, `persistent`; `unlockLost`: `player`;
    /// - `tournamentFinished` (to each participant): `tournament`, `winner`;
    /// - `achievementUnlocked`: `achievement` (its id), `tier`, `title`.
    public enum Kind: String, Codable, Sendable {
        case invitationReceived, invitationAnswered, invitationExpired, gameStarted, gameCancelled
        case roundFinished, gameFinished, unlocked, unlockLost, tournamentFinished, achievementUnlocked
    }

    public var cursor: Int64
    public var at: Date
    public var kind: Kind
    public var data: EventData
}

/// The details of an event; which fields are set depends on its kind.
public struct EventData: Codable, Sendable, Equatable {
    public var game: Int64?
    /// The other player concerned: the inviter, the answering invitee, the unlocked player.
    public var player: String?
    public var response: InvitationResponse?
    public var round: Int?
    public var scores: [String: Int]?
    public var winner: String?
    public var persistent: Bool?
    /// The players of a game that starts, in the game's order.
    public var participants: [String]?
    /// The rounds of a game that starts, with the plan each is played on.
    public var rounds: [PlannedRound]?
    /// The tournament that finished.
    public var tournament: Int64?
    /// An achievement granted: its id, the tier and its title.
    public var achievement: String?
    public var tier: Int?
    public var title: String?

    public init(
        game: Int64? = nil, player: String? = nil, response: InvitationResponse? = nil, round: Int? = nil,
        scores: [String: Int]? = nil, winner: String? = nil, persistent: Bool? = nil,
        participants: [String]? = nil, rounds: [PlannedRound]? = nil, tournament: Int64? = nil,
        achievement: String? = nil, tier: Int? = nil, title: String? = nil
    ) {
        self.game = game
        self.player = player
        self.response = response
        self.round = round
        self.scores = scores
        self.winner = winner
        self.persistent = persistent
        self.participants = participants
        self.rounds = rounds
        self.tournament = tournament
        self.achievement = achievement
        self.tier = tier
        self.title = title
    }
}
