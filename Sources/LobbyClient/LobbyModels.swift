import Foundation

// The API's JSON shapes as the client sees them. Deliberately separate from the server's types:
// the client depends on the wire format only, never on the Lobby module.

/// A player's iBeacon identity: the deployment's proximity UUID and the player's major/minor.
public struct PlayerBeacon: Codable, Sendable, Hashable {
    public var uuid: UUID
    public var major: Int
    public var minor: Int

    public init(uuid: UUID, major: Int, minor: Int) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }
}

/// The authenticated player's own profile.
public struct PlayerProfile: Codable, Sendable, Equatable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var email: String
    public var beacon: PlayerBeacon
    public var photoURL: String?
    /// IANA zone its days are counted in; nil: UTC.
    public var timeZone: String?
    public var country: String?
}

/// A session token and its expiry.
public struct Session: Codable, Sendable {
    public var token: String
    public var expiresAt: Date
}

/// Another player's public profile.
public struct PublicProfile: Codable, Sendable, Equatable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var photoURL: String?
    public var stats: PlayerStats
}

/// Results over the statistics span.
public struct PlayerStats: Codable, Sendable, Equatable {
    public var spanDays: Double
    public var gamesPlayed: Int
    public var gamesWon: Int
    public var gamesLost: Int
    public var gamesDrawn: Int
    public var roundsWon: Int
    public var bestScore: Int?
}

/// One player beacon seen by the agent, with its estimated distance in metres.
public struct EncounterSighting: Codable, Sendable {
    public var uuid: UUID
    public var major: Int
    public var minor: Int
    public var distance: Double?
    public var at: Date

    public init(uuid: UUID, major: Int, minor: Int, distance: Double?, at: Date) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.distance = distance
        self.at = at
    }
}

/// What the server made of a batch of sightings.
public struct EncounterReceipt: Codable, Sendable, Equatable {
    public var recorded: Int
    public var ignored: Int
}

/// An invitation (its id is also the id of the game it proposes).
public struct Invitation: Codable, Sendable, Equatable {
    public struct Invitee: Codable, Sendable, Equatable {
        public var username: String
        /// `pending`, `accepted`, `declined` or `expired`.
        public var response: String
    }

    public struct Excluded: Codable, Sendable, Equatable {
        public var username: String
        public var reason: String
    }

    public var id: Int64
    public var inviter: String
    public var invitees: [Invitee]
    public var excluded: [Excluded]
    /// `pending`, `open`, `finished` or `cancelled`.
    public var state: String
    public var expiresAt: Date
}

/// A game of the lobby.
public struct LobbyGame: Codable, Sendable, Equatable {
    public struct Round: Codable, Sendable, Equatable {
        public var n: Int
        /// The minigame, a `MinigameCatalog` name.
        public var game: String
        /// Seconds the round lasts: record exactly this long.
        public var duration: Double
        /// Seconds from the start of the round to the signal the lobby drew (Quickdraw): show it
        /// then; the lobby verifies the score against this time whatever the recording says.
        public var signalTime: Double?
        public var scores: [String: Int]
        public var winner: String?
    }

    public var id: Int64
    /// `pending`, `open`, `finished` or `cancelled`.
    public var state: String
    public var inviter: String
    public var participants: [String]
    public var rounds: [Round]
    public var winner: String?
    /// In the answer to a score submission: the achievements it granted you.
    public var achievements: [AchievementGrant]?
}

/// A player the caller has unlocked.
public struct UnlockedPlayer: Codable, Sendable, Equatable, Hashable {
    public var username: String
    public var persistent: Bool

    public init(username: String, persistent: Bool) {
        self.username = username
        self.persistent = persistent
    }
}

/// An event of the feed. `kind` is one of `invitationReceived` (`game`, `player`: the inviter),
/// `invitationAnswered` (`game`, `player`: the invitee, `response`), `invitationExpired` (`game`),
/// `gameStarted` (`game`, `participants`, `rounds`), `gameCancelled` (`game`), `roundFinished`
/// (`game`, `round`, `scores`, `winner`), `gameFinished` (`game`, `winner`), `unlocked`
/// (`player`, `persistent`), `unlockLost` (`player`), `tournamentFinished` (`tournament`,
/// `winner`) and `achievementUnlocked` (`achievement`, `tier`, `title`); kinds added later keep this shape.
public struct LobbyEvent: Codable, Sendable, Equatable {
    public struct Details: Codable, Sendable, Equatable {
        public var game: Int64?
        public var player: String?
        public var response: String?
        public var round: Int?
        public var scores: [String: Int]?
        /// The round's or the game's winner; nil on a tie or a draw.
        public var winner: String?
        public var persistent: Bool?
        /// `gameStarted`: the players, in the game's order.
        public var participants: [String]?
        /// `gameStarted`: the rounds and the plan each is played on.
        public var rounds: [PlannedRound]?
        /// `tournamentFinished`: which one (`winner` says who won it).
        public var tournament: Int64?
        /// `achievementUnlocked`: the achievement's id, the tier granted and its title.
        public var achievement: String?
        public var tier: Int?
        public var title: String?
    }

    /// A round as its game starts: the minigame and the plan to play it on.
    public struct PlannedRound: Codable, Sendable, Equatable {
        public var n: Int
        public var game: String
        /// Seconds the round lasts.
        public var duration: Double
        /// Seconds from the start of the round to the signal (Quickdraw).
        public var signalTime: Double?

        public init(n: Int, game: String, duration: Double, signalTime: Double? = nil) {
            self.n = n
            self.game = game
            self.duration = duration
            self.signalTime = signalTime
        }
    }

    /// Increases from event to event: resume the feed after the last one seen.
    public var cursor: Int64
    public var at: Date
    public var kind: String
    public var data: Details
}

/// A page of the event feed.
public struct EventPage: Codable, Sendable {
    public var events: [LobbyEvent]
    public var next: Int64
}
