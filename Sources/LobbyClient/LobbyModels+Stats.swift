import Foundation

/// A player's statistics: the 30-day summary, totals since registration, the last 30 days in the
/// player's zone, its rank by unlocked players, the minigames' record holders and the country most
/// of its unlocked players come from.
public struct PlayerStatistics: Codable, Sendable, Equatable {
    public struct Totals: Codable, Sendable, Equatable {
        public var games: Int
        public var wins: Int
        public var losses: Int
        public var draws: Int
        public var roundsWon: Int
        public var points: Int
    }

    /// One local day (`YYYY-MM-DD` in the player's zone).
    public struct Day: Codable, Sendable, Equatable {
        public var day: String
        public var wins: Int
        public var losses: Int
        public var draws: Int
    }

    public struct Unlocked: Codable, Sendable, Equatable {
        public var count: Int
        public var rank: Int
        public var rankedPlayers: Int
    }

    public struct Record: Codable, Sendable, Equatable {
        public var minigame: String
        public var score: Int
        public var holder: String
        public var at: Date
    }

    public var username: String
    public var timeZone: String
    public var registeredAt: Date
    public var spanDays: Double
    public var gamesPlayed: Int
    public var gamesWon: Int
    public var gamesLost: Int
    public var gamesDrawn: Int
    public var roundsWon: Int
    public var bestScore: Int?
    public var totals: Totals
    public var days: [Day]
    public var unlocked: Unlocked
    public var records: [Record]
    public var topOpponentCountry: String?
}

/// A page of a board (`day`, `week`, `month`, `all`, `league`).
public struct Leaderboard: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var rank: Int
        public var username: String
        public var points: Int
        /// League boards: `up` or `down` for the promotion and demotion zones.
        public var movement: String?
    }

    public struct Window: Codable, Sendable, Equatable {
        public var start: String
        public var end: String
        public var timeZone: String
    }

    public struct League: Codable, Sendable, Equatable {
        public var tier: Int
        public var name: String
        public var group: Int?
        public var promoted: Int
        public var demoted: Int
    }

    public var board: String
    public var window: Window?
    public var league: League?
    public var participants: Int
    public var offset: Int
    public var limit: Int
    public var entries: [Entry]
    public var me: Entry?
    public var ahead: Entry?
}

/// A tier of an achievement, as granted.
public struct AchievementGrant: Codable, Sendable, Equatable {
    public var achievement: String
    public var tier: Int
    public var title: String
    public var threshold: Int
    public var grantedAt: Date
}

/// An achievement with the player's progress.
public struct AchievementProgress: Codable, Sendable, Equatable {
    public struct Tier: Codable, Sendable, Equatable {
        public var tier: Int
        public var title: String
        public var threshold: Int
        public var grantedAt: Date?
    }

    public var achievement: String
    public var title: String
    public var measure: String
    public var value: Int
    public var tiers: [Tier]
}
