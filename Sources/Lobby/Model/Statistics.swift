import Foundation
import Minigames
import SystemSupport

/// A player's statistics as `GET /v1/players/{username}/stats` answers: the 30-day summary
/// (``PlayerStats``'s keys, kept at the top level), totals since registration, wins and losses per
/// day of the last 30 days in the player's own zone, its rank by unlocked players, the record
/// holders of each minigame and the country most of its unlocked players come from.
public struct PlayerStatistics: Codable, Sendable, Equatable {
    public struct Totals: Codable, Sendable, Equatable {
        public var games: Int
        public var wins: Int
        public var losses: Int
        public var draws: Int
        public var roundsWon: Int
        public var points: Int
    }

    /// One local day: `day` is its date (`YYYY-MM-DD`) in the player's zone.
    public struct Day: Codable, Sendable, Equatable {
        public var day: String
        public var wins: Int
        public var losses: Int
        public var draws: Int
    }

    public struct Unlocked: Codable, Sendable, Equatable {
        /// Players it has unlocked.
        public var count: Int
        /// Its rank by that number among every player (ties share a rank: 1, 2, 2, 4).
        public var rank: Int
        /// Players with at least one unlocked player.
        public var rankedPlayers: Int
    }

    /// The best single round of a minigame, and who scored it first.
    public struct Record: Codable, Sendable, Equatable {
        public var minigame: MinigameName
        public var score: Int
        public var holder: String
        public var at: Date
    }

    public var username: String
    /// The IANA zone its days are counted in (UTC when it has not set one).
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
    /// The last 30 local days, oldest first, today last.
    public var days: [Day]
    public var unlocked: Unlocked
    public var records: [Record]
    /// ISO 3166-1 alpha-2 code of the country most of its unlocked players gave; nil when none gave one.
    public var topOpponentCountry: String?
}

extension PlayerStatistics: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("bestScore", bestScore)
            json.key("days")
            json.array(days)
            json.member("gamesDrawn", gamesDrawn)
            json.member("gamesLost", gamesLost)
            json.member("gamesPlayed", gamesPlayed)
            json.member("gamesWon", gamesWon)
            json.key("records")
            json.array(records)
            json.member("registeredAt", registeredAt)
            json.member("roundsWon", roundsWon)
            json.member("spanDays", spanDays)
            json.member("timeZone", timeZone)
            json.member("topOpponentCountry", topOpponentCountry)
            json.member("totals", totals)
            json.member("unlocked", unlocked)
            json.member("username", username)
        }
    }
}

extension PlayerStatistics.Totals: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("draws", draws)
            json.member("games", games)
            json.member("losses", losses)
            json.member("points", points)
            json.member("roundsWon", roundsWon)
            json.member("wins", wins)
        }
    }
}

extension PlayerStatistics.Day: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("day", day)
            json.member("draws", draws)
            json.member("losses", losses)
            json.member("wins", wins)
        }
    }
}

extension PlayerStatistics.Unlocked: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("count", count)
            json.member("rank", rank)
            json.member("rankedPlayers", rankedPlayers)
        }
    }
}

extension PlayerStatistics.Record: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("at", at)
            json.member("holder", holder)
            json.member("minigame", minigame)
            json.member("score", score)
        }
    }
}

/// The optional profile fields statistics and boards use.
public struct PlayerSettings: Codable, Sendable, Equatable {
    /// IANA time zone (`Europe/Oslo`): days, weeks and months are counted in it. Nil: UTC.
    public var timeZone: String?
    /// ISO 3166-1 alpha-2 country code, upper case.
    public var country: String?

    public init(timeZone: String? = nil, country: String? = nil) {
        self.timeZone = timeZone
        self.country = country
    }
}
