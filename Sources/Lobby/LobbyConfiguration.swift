import Foundation

/// The rules' numbers: limits, lifetimes and windows. Every one is configurable so a deployment (or a
/// test) can tune them; the defaults are the documented ones.
public struct LobbyConfiguration: Sendable {
    /// The iBeacon proximity UUID every player of this deployment advertises under.
    public var deploymentUUID: UUID
    /// A player takes part in at most this many pending or open games at once.
    public var maximumOpenGames: Int
    /// A player holds at most this many unanswered invitations at once.
    public var maximumOpenInvitations: Int
    /// How long an invitation waits for answers before it expires, in seconds.
    public var invitationLifetime: TimeInterval
    /// After a decline, the inviter cannot invite the same player again for this long, in seconds.
    public var declineCooldown: TimeInterval
    /// A player "currently sees" another one it reported an encounter with this recently, in seconds.
    public var encounterWindow: TimeInterval
    /// Statistics cover games finished in this span before now, in seconds.
    public var statisticsSpan: TimeInterval
    /// Number of rounds of a new game.
    public var roundsPerGame: Int
    /// The minigame types rounds are drawn from.
    public var enabledMinigames: [String]
    /// How long a session token stays valid, in seconds.
    public var sessionLifetime: TimeInterval
    /// The bcrypt cost of password hashes (4…31; each step doubles the work).
    public var bcryptCost: UInt8
    /// The largest accepted profile photo, in bytes.
    public var maximumPhotoBytes: Int

    public init(
        deploymentUUID: UUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
        maximumOpenGames: Int = 5,
        maximumOpenInvitations: Int = 10,
        invitationLifetime: TimeInterval = 24 * 3600,
        declineCooldown: TimeInterval = 3600,
        encounterWindow: TimeInterval = 10 * 60,
        statisticsSpan: TimeInterval = 30 * 24 * 3600,
        roundsPerGame: Int = 3,
        enabledMinigames: [String] = ["shake", "tilt", "shout"],
        sessionLifetime: TimeInterval = 30 * 24 * 3600,
        bcryptCost: UInt8 = 12,
        maximumPhotoBytes: Int = 512 * 1024
    ) {
        self.deploymentUUID = deploymentUUID
        self.maximumOpenGames = maximumOpenGames
        self.maximumOpenInvitations = maximumOpenInvitations
        self.invitationLifetime = invitationLifetime
        self.declineCooldown = declineCooldown
        self.encounterWindow = encounterWindow
        self.statisticsSpan = statisticsSpan
        self.roundsPerGame = roundsPerGame
        self.enabledMinigames = enabledMinigames
        self.sessionLifetime = sessionLifetime
        self.bcryptCost = bcryptCost
        self.maximumPhotoBytes = maximumPhotoBytes
    }
}
