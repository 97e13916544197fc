import LobbyAPI

/// The kind of an event of the lobby's feed (`invitationReceived`, `peerReading`, …).
///
/// The API document leaves `kind` a string so that a client keeps working when the lobby adds
/// kinds, and skips those it does not know; so this is a raw-value struct with a constant for
/// each kind the agent follows (as `BeaconFrames.ADType` is), not a closed enum.
public struct LobbyEventKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let invitationReceived: Self = "invitationReceived"
    public static let invitationAnswered: Self = "invitationAnswered"
    public static let invitationExpired: Self = "invitationExpired"
    public static let gameStarted: Self = "gameStarted"
    public static let gameCancelled: Self = "gameCancelled"
    public static let roundFinished: Self = "roundFinished"
    public static let gameFinished: Self = "gameFinished"
    public static let unlocked: Self = "unlocked"
    public static let unlockLost: Self = "unlockLost"
    public static let achievementUnlocked: Self = "achievementUnlocked"
    public static let tournamentFinished: Self = "tournamentFinished"
    /// Another player's reading of us, for two-way ranging.
    public static let peerReading: Self = "peerReading"
}

extension Components.Schemas.Event {
    /// ``kind`` as a ``LobbyEventKind``.
    public var eventKind: LobbyEventKind { LobbyEventKind(rawValue: kind) }
}
