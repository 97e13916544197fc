import Foundation
import LobbyAPI
import Minigames

// The API's JSON shapes are the types generated from the lobby's OpenAPI document
// (Sources/LobbyServer/openapi.yaml → Sources/LobbyAPI/Generated, `scripts/generate-lobby-api`);
// these are the names the agent knows them by. Never a copy: a change to the document changes
// them, and whatever uses a field the document no longer has stops compiling.

/// An iBeacon identity: the deployment's proximity UUID and a player's (or a location's) major/minor.
public typealias PlayerBeacon = Components.Schemas.Beacon
/// The authenticated player's own profile.
public typealias PlayerProfile = Components.Schemas.Player
/// A session token and its expiry.
public typealias LobbySession = Components.Schemas.Session
/// Another player's public profile.
public typealias PublicProfile = Components.Schemas.Profile
/// Results over the statistics span.
public typealias PlayerStats = Components.Schemas.Stats
/// One beacon identity seen by the agent, with its estimated distance in metres and, for two-way
/// ranging, the filtered RSSI read of it (with the measured power it advertises, and the RSSI's
/// variance when known); the lobby hands that reading to the player seen as a `peerReading` event.
public typealias EncounterSighting = Components.Schemas.Sighting
/// What the lobby made of a batch of sightings.
public typealias EncounterReceipt = Components.Schemas.EncounterReceipt
/// An invitation; its id is also the id of the game it proposes.
public typealias Invitation = Components.Schemas.Invitation
/// An invitee's answer: `pending`, `accepted`, `declined` or `expired`.
public typealias InvitationResponse = Components.Schemas.InvitationResponse
/// A game of the lobby.
public typealias LobbyGame = Components.Schemas.Game
/// A game's state: `pending`, `open`, `finished` or `cancelled`.
public typealias GameState = Components.Schemas.GameState
/// One of the lobby's minigames.
public typealias LobbyMinigame = Components.Schemas.Minigame
/// A player the caller has unlocked.
public typealias UnlockedPlayer = Components.Schemas.UnlockedPlayer
/// An event of the feed; see ``LobbyEvent/Details`` for what each kind carries.
public typealias LobbyEvent = Components.Schemas.Event
/// A page of the event feed.
public typealias EventPage = Components.Schemas.EventPage
/// A player's statistics: the 30-day summary, totals since registration, the last 30 days in the
/// player's zone, its rank by unlocked players, the minigames' record holders and the country most
/// of its unlocked players come from.
public typealias PlayerStatistics = Components.Schemas.Statistics
/// A page of a board (`day`, `week`, `month`, `all`, `league`, `location:ID`, `tournament:ID`).
public typealias Leaderboard = Components.Schemas.Leaderboard
/// A tier of an achievement, as granted.
public typealias AchievementGrant = Components.Schemas.AchievementGrant
/// An achievement with the player's progress.
public typealias AchievementProgress = Components.Schemas.Achievement
/// A multiplayer location: a stationary beacon where tournaments run.
public typealias LobbyLocation = Components.Schemas.Location
/// A tournament at a location; `standings` only when one tournament was asked for.
public typealias TournamentSummary = Components.Schemas.Tournament
/// One entry's place in a tournament (ties share a rank).
public typealias TournamentStanding = Components.Schemas.Standing
/// The caller's entry in a tournament: its rounds, each with the plan to play it on and the
/// verified score once submitted.
public typealias TournamentEntry = Components.Schemas.TournamentEntry
/// How radio travels at a location, as its operator measured it.
public typealias LocationSiteProfile = Components.Schemas.SiteProfile
/// A device's radio offsets, as the lobby solved them from the crowd's two-way readings.
public typealias LobbyRadioOffsets = Components.Schemas.RadioOffsets
/// A location's path-loss exponent, as the lobby solved it from the crowd present there.
public typealias LocationCrowdProfile = Components.Schemas.CrowdProfile
/// Where a location's beacon stands on its owner's site.
public typealias LobbyLocationPosition = Components.Schemas.LocationPosition
/// What the lobby made of a location beacon's report of what it heard.
public typealias LobbyHearingReceipt = Operations.ReportLocationHearings.Output.Ok.Body.JsonPayload

extension Components.Schemas.Minigame {
    /// This minigame's name as the rest of Nearplay knows it (the API document lists the games
    /// the lobby plays; the agent plays them by ``Minigames/MinigameName``).
    public var name: MinigameName { MinigameName(rawValue: rawValue) }
}

extension Components.Schemas.Invitation {
    public typealias Invitee = Components.Schemas.Invitee
    public typealias Excluded = Components.Schemas.Excluded
}

extension Components.Schemas.Game {
    /// A round: its minigame, the plan to record it on (``duration``, ``signalTime``), the scores in.
    public typealias Round = Components.Schemas.GameRound
}

extension Components.Schemas.Event {
    public typealias Details = Components.Schemas.EventData
    public typealias PlannedRound = Components.Schemas.PlannedRound
}

extension Components.Schemas.Statistics {
    public typealias Totals = Components.Schemas.Totals
    public typealias Day = Components.Schemas.Day
    public typealias Unlocked = Components.Schemas.UnlockedRank
    public typealias Record = Components.Schemas.Record
}

extension Components.Schemas.Leaderboard {
    public typealias Entry = Components.Schemas.LeaderboardEntry
    public typealias Window = Components.Schemas.LeaderboardWindow
    public typealias League = Components.Schemas.League
}

extension Components.Schemas.Achievement {
    public typealias Tier = Components.Schemas.AchievementTier
}

extension Components.Schemas.TournamentEntry {
    public typealias Round = Components.Schemas.EntryRound
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
