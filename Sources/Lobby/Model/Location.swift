import BeaconFrames
import Foundation
import Minigames

/// A multiplayer location: a stationary device that advertises the location's beacon identity,
/// where tournaments run. Locations advertise under the deployment's UUID with major
/// ``LocationBeacon/major`` (0, which no player is ever given) and their id as the minor.
public struct Location: Codable, Sendable, Equatable {
    public var id: Int64
    public var name: String
    /// The player who registered it (the operator whose session the beacon device runs with).
    public var owner: String
    public var beacon: BeaconIdentity
    /// The IANA time zone its tournament windows follow (days, weeks from Monday, months).
    public var timeZone: String
    public var createdAt: Date
    /// Its tournaments still open for entries, soonest to close first.
    public var tournaments: [TournamentSummary]
    /// How radio travels there, as its operator measured it; nil until one is published.
    public var siteProfile: SiteProfile? = nil
    /// The exponent the crowd solve found, from the beacons placed on its site or from players
    /// present there; nil until one ran.
    public var crowdProfile: CrowdProfile? = nil
    /// Where its beacon stands on its owner's site; nil until its owner placed it.
    public var position: LocationPosition? = nil
}

/// Where a location's beacon stands: metres on a plane its owner chose for the site (a label of
/// the owner's). Beacons of one owner placed on one site hear each other at the distances these
/// give, which pins the site's exponent (``LobbyStore/reportLocationHearings(_:location:_:)``).
public struct LocationPosition: Codable, Sendable, Equatable {
    /// Metres either way from the site's origin, on each axis.
    public static let coordinateRange: ClosedRange<Double> = -1000...1000

    public var site: String
    public var x: Double
    public var y: Double
    public var placedAt: Date

    public init(site: String, x: Double, y: Double, placedAt: Date) {
        self.site = site
        self.x = x
        self.y = y
        self.placedAt = placedAt
    }
}

/// A location's path-loss exponent as the crowd solve found it: from the readings the beacons
/// placed on its site took of each other at known distances, or from the two-way readings of
/// players present there. Without known distances the readings barely pin an exponent, so a
/// players' `exponentError` mostly stays near the prior's 0.5: agents use a profile only when it
/// is 0.3 or less, and a ``SiteProfile`` always wins over it.
public struct CrowdProfile: Codable, Sendable, Equatable {
    /// What the solve had there.
    public enum Source: String, Codable, Sendable {
        case players, beacons
    }

    /// 1 to 6 (the solve's answer is held to that range).
    public var exponent: Double
    public var exponentError: Double
    /// Distinct pairs of devices (players, or beacons of the site) whose exchanges the solve used.
    public var pairs: Int
    public var solvedAt: Date
    public var source: Source
    /// With beacons: the lasting shadowing per path (dB) the solve took.
    public var shadowing: Double?

    public init(exponent: Double, exponentError: Double, pairs: Int, solvedAt: Date, source: Source = .players, shadowing: Double? = nil) {
        self.exponent = exponent
        self.exponentError = exponentError
        self.pairs = pairs
        self.solvedAt = solvedAt
        self.source = source
        self.shadowing = shadowing
    }
}

/// A location's site profile: the log-distance exponent `nearplay calibrate ranging` fitted there
/// from a beacon held at known distances (the receiver's own offset stays with the receiver).
public struct SiteProfile: Codable, Sendable, Equatable {
    /// The site's path-loss exponent, 1 to 6.
    public var exponent: Double
    /// The distances (m) the beacon was held at: two or more different ones, up to 20.
    public var distances: [Double]
    /// How many readings the fit used.
    public var readings: Int
    public var calibratedAt: Date

    public init(exponent: Double, distances: [Double], readings: Int, calibratedAt: Date) {
        self.exponent = exponent
        self.distances = distances
        self.readings = readings
        self.calibratedAt = calibratedAt
    }
}

/// Where locations sit in the deployment's beacon identities.
public enum LocationBeacon {
    /// Every location advertises this major; players are allocated from major 1 up.
    public static let major = 0
    /// Minors are location ids, so at most this many locations.
    public static let maximumLocations = 65535

    /// The identity location `id` advertises before it has a rotating one.
    static func staticIdentity(_ id: Int64, deployment: UUID) -> BeaconIdentity {
        BeaconIdentity(uuid: deployment, major: UInt16(major), minor: UInt16(id))
    }
}

/// How often a location's tournaments start over.
public enum TournamentPeriod: String, Codable, Sendable, CaseIterable {
    case daily, weekly, monthly
}

/// Whether a tournament takes entries or has been decided.
public enum TournamentState: String, Codable, Sendable {
    case open, closed
}

/// A tournament; lists leave out its standings.
public struct TournamentSummary: Codable, Sendable, Equatable {
    public var id: Int64
    public var location: Int64
    public var period: TournamentPeriod
    public var state: TournamentState
    public var startsAt: Date
    /// When entries and scores stop and the best total wins.
    public var endsAt: Date
    /// The minigames every entry plays, in order.
    public var minigames: [MinigameName]
    public var entries: Int
    /// The winner, once closed (nil when no entry played a round).
    public var winner: String?
    /// Entries best first, when one tournament is asked for.
    public var standings: [TournamentStanding]?
}

/// One entry's place in a tournament.
public struct TournamentStanding: Codable, Sendable, Equatable {
    public var rank: Int
    public var player: String
    public var total: Int
    public var roundsPlayed: Int
}

/// A player's entry in a tournament: the rounds it plays (the tournament's minigames, with a plan
/// drawn for this entry) and what it scored so far.
public struct TournamentEntry: Codable, Sendable, Equatable {
    public struct Round: Codable, Sendable, Equatable {
        public var n: Int
        public var game: MinigameName
        /// Seconds the round lasts.
        public var duration: Double
        /// Always nil: Quickdraw's signal, drawn for this entry, is revealed when the round starts
        /// (``LobbyStore/revealTournamentSignal(_:tournament:round:)``).
        public var signalTime: Double?
        /// The verified score, once submitted.
        public var score: Int?
    }

    public var tournament: Int64
    public var player: String
    public var joinedAt: Date
    public var endsAt: Date
    public var rounds: [Round]
    public var total: Int
}
