import Foundation
import SystemSupport

/// A page of a board, as `GET /v1/leaderboards/{board}` answers.
///
/// Ranks are standard competition ranks: players with the same points share a rank and the next
/// rank skips (1, 2, 2, 4). Within a rank, players are listed by id (registration order).
public struct Leaderboard: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var rank: Int
        public var username: String
        public var points: Int
        /// League boards: `up` in the promotion zone, `down` in the demotion zone.
        public var movement: String?
    }

    /// The local dates a windowed board covers, both included, in the caller's zone.
    public struct Window: Codable, Sendable, Equatable {
        public var start: String
        public var end: String
        public var timeZone: String
    }

    /// Which league group a league board shows.
    public struct League: Codable, Sendable, Equatable {
        public var tier: Int
        public var name: String
        /// The group within the tier this week, nil when the caller has not played this week (it
        /// joins a group of `tier` with its first result).
        public var group: Int?
        /// How many of the group move up, and how many down, at the end of the week.
        public var promoted: Int
        public var demoted: Int
    }

    /// `day`, `week`, `month`, `all` or `league`.
    public var board: String
    public var window: Window?
    public var league: League?
    /// Players on the board (those who earned points in its window).
    public var participants: Int
    public var offset: Int
    public var limit: Int
    public var entries: [Entry]
    /// The caller's own place, nil when it has no points in the window.
    public var me: Entry?
    /// The player just ahead of the caller: the last one listed above it with more points.
    public var ahead: Entry?
}

extension Leaderboard: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("ahead", ahead)
            json.member("board", board)
            json.key("entries")
            json.array(entries)
            json.member("league", league)
            json.member("limit", limit)
            json.member("me", me)
            json.member("offset", offset)
            json.member("participants", participants)
            json.member("window", window)
        }
    }
}

extension Leaderboard.Entry: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("movement", movement)
            json.member("points", points)
            json.member("rank", rank)
            json.member("username", username)
        }
    }
}

extension Leaderboard.Window: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("end", end)
            json.member("start", start)
            json.member("timeZone", timeZone)
        }
    }
}

extension Leaderboard.League: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("demoted", demoted)
            json.member("group", group)
            json.member("name", name)
            json.member("promoted", promoted)
            json.member("tier", tier)
        }
    }
}

extension JSONWriter {
    /// An optional member written by itself; left out when nil.
    public mutating func member<Value: JSONWritable>(_ name: StaticString, _ value: Value?) {
        if let value { member(name, value) }
    }
}
