import Foundation

// Multiplayer locations and tournaments, as the API sends them.

/// A multiplayer location: a stationary beacon where tournaments run.
public struct LobbyLocation: Codable, Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var owner: String
    /// What the location's device advertises: the deployment UUID, major ``LocationBeacon/major``, minor = id.
    public var beacon: PlayerBeacon
    public var timeZone: String
    /// Its running tournaments.
    public var tournaments: [TournamentSummary]
}

/// Where locations sit among the deployment's beacon identities.
public enum LocationBeacon {
    /// The major every location advertises (no player is given it); the minor is the location's id.
    public static let major = 0

    /// The location id a beacon identity of `deployment` names, or nil when it is no location's.
    public static func locationId(of beacon: PlayerBeacon, deployment: UUID) -> Int64? {
        guard beacon.uuid == deployment, beacon.major == major, beacon.minor > 0 else { return nil }
        return Int64(beacon.minor)
    }
}

/// A tournament at a location; `standings` only when one tournament was asked for.
public struct TournamentSummary: Codable, Sendable, Equatable {
    public var id: Int64
    public var location: Int64
    /// `daily`, `weekly` or `monthly`.
    public var period: String
    /// `open` or `closed`.
    public var state: String
    public var startsAt: Date
    public var endsAt: Date
    /// The minigames every entry plays, in order.
    public var minigames: [String]
    public var entries: Int
    public var winner: String?
    public var standings: [TournamentStanding]?
}

/// One entry's place in a tournament (ties share a rank).
public struct TournamentStanding: Codable, Sendable, Equatable {
    public var rank: Int
    public var player: String
    public var total: Int
    public var roundsPlayed: Int
}

/// The caller's entry in a tournament: its rounds, each with the plan to play it on and the
/// verified score once submitted.
public struct TournamentEntry: Codable, Sendable, Equatable {
    public struct Round: Codable, Sendable, Equatable {
        public var n: Int
        public var game: String
        public var duration: Double
        public var signalTime: Double?
        public var score: Int?
    }

    public var tournament: Int64
    public var player: String
    public var joinedAt: Date
    public var endsAt: Date
    public var rounds: [Round]
    public var total: Int
}
