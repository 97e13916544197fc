/// What other authenticated players see of a player: no e-mail, no beacon.
public struct PublicProfile: Codable, Sendable, Equatable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var photoURL: String?
    public var stats: PlayerStats
}

/// A player's results over the statistics span (30 days by default).
public struct PlayerStats: Codable, Sendable, Equatable {
    /// Length of the span covered, in days.
    public var spanDays: Double
    public var gamesPlayed: Int
    public var gamesWon: Int
    public var gamesLost: Int
    /// Finished games nobody won (equal rounds won and equal totals).
    public var gamesDrawn: Int
    public var roundsWon: Int
    public var bestScore: Int?
}
