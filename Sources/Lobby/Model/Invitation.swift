import Foundation

/// An invitation to a game; it shares its id with the game it proposes.
public struct Invitation: Codable, Sendable, Equatable {
    public struct Invitee: Codable, Sendable, Equatable {
        public var username: String
        public var response: InvitationResponse
    }

    public var id: Int64
    public var inviter: String
    public var invitees: [Invitee]
    /// Players asked for but left out, with the reason; only in the answer to the invitation.
    public var excluded: [ExcludedInvitee]
    public var state: GameState
    public var createdAt: Date
    public var expiresAt: Date
}

/// A player left out of an invitation, and why.
public struct ExcludedInvitee: Codable, Sendable, Hashable {
    /// Why a player could not be invited.
    public enum Reason: String, Codable, Sendable {
        case unknownPlayer, yourself, blocked, notNearby, openGameExists, invitationLimitReached, declinedRecently
    }

    public var username: String
    public var reason: Reason

    public init(username: String, reason: Reason) {
        self.username = username
        self.reason = reason
    }
}

/// The answer to an invitation request.
public struct InvitationReceipt: Sendable {
    public var invitation: Invitation
    /// False when the request repeated an earlier one with the same key: nothing was created.
    public var created: Bool
}
