import Foundation
import SystemSupport

/// A tier of an achievement a player was granted.
public struct AchievementGrant: Codable, Sendable, Equatable {
    /// The achievement's id (``AchievementKind/id``), e.g. `games` or `wins.screamer`.
    public var achievement: String
    public var tier: Int
    /// `Regular II`, say.
    public var title: String
    /// The number reached: 50 (games played).
    public var threshold: Int
    public var grantedAt: Date
}

/// One achievement with the player's progress: every tier, granted or not, and the number counted.
public struct AchievementProgress: Codable, Sendable, Equatable {
    public struct Tier: Codable, Sendable, Equatable {
        public var tier: Int
        public var title: String
        public var threshold: Int
        /// When it was granted; nil while still to reach.
        public var grantedAt: Date?
    }

    public var achievement: String
    public var title: String
    /// What is counted: `games played`.
    public var measure: String
    /// The player's count now.
    public var value: Int
    public var tiers: [Tier]
}

extension AchievementGrant: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("achievement", achievement)
            json.member("grantedAt", grantedAt)
            json.member("threshold", threshold)
            json.member("tier", tier)
            json.member("title", title)
        }
    }
}
