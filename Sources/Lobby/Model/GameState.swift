/// Where a game is in its life: `pending` (an invitation awaiting answers), `open` (being played),
/// `finished` (evaluated) or `cancelled` (nobody accepted).
public enum GameState: String, Codable, Sendable {
    case pending, open, finished, cancelled
}

/// An invitee's answer to an invitation.
public enum InvitationResponse: String, Codable, Sendable {
    case pending, accepted, declined, expired
}
