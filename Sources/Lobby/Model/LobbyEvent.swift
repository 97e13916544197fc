import Foundation

/// Something that happened to a player, in the order it happened. `cursor` increases; read the
/// feed after the last cursor seen to catch up.
public struct LobbyEvent: Codable, Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Codable, Sendable {
        case invitationReceived, invitationAnswered, gameStarted, gameCancelled
        case roundFinished, gameFinished, unlocked, unlockLost
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

    public init(
        game: Int64? = nil, player: String? = nil, response: InvitationResponse? = nil, round: Int? = nil,
        scores: [String: Int]? = nil, winner: String? = nil, persistent: Bool? = nil
    ) {
        self.game = game
        self.player = player
        self.response = response
        self.round = round
        self.scores = scores
        self.winner = winner
        self.persistent = persistent
    }
}
