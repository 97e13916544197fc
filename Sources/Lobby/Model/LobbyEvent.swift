import BeaconFrames
import Foundation

/// Something that happened to a player, in the order it happened. `cursor` increases; read the
/// feed after the last cursor seen to catch up.
public struct LobbyEvent: Codable, Sendable, Equatable {
    /// What happened. The data each kind carries:
    /// - `invitationReceived`: `game`, `player` (the inviter);
    /// - `invitationAnswered` (to the inviter): `game`, `player` (the invitee), `response`;
    /// - `invitationExpired` (to an invitee who did not answer in time): `game`;
    /// - `gameStarted`: `game`, `participants`, `rounds` (minigame, duration; Quickdraw's signal is revealed when the round starts);
    /// - `gameCancelled`: `game`;
    /// - `roundFinished`: `game`, `round`, `scores`, `winner` (nil on a tie);
    /// - `gameFinished`: `game`, `winner` (nil on a draw);
    /// - `unlocked`: `player`, `persistent`; `unlockLost`: `player`;
    /// - `tournamentFinished` (to each participant): `tournament`, `winner`;
    /// - `achievementUnlocked`: `achievement` (its id), `tier`, `title`;
    /// - `peerReading` (to a player another one reported seeing, with a reading): `player` (who saw
    ///   it), `rssi`, `measuredPower`, `rssiVariance` (when sent), for two-way ranging; the event's
    ///   time is the report's.
    public enum Kind: String, Codable, Sendable {
        case invitationReceived, invitationAnswered, invitationExpired, gameStarted, gameCancelled
        case roundFinished, gameFinished, unlocked, unlockLost, tournamentFinished, achievementUnlocked, peerReading
    }

    public var cursor: Int64
    public var at: Date
    public var kind: Kind
    public var data: EventData
}

/// The details of an event; which fields are set depends on its kind.
public struct EventData: Codable, Sendable, Equatable {
    public var game: Int64?
    /// The other player concerned: the inviter, the answering invitee, the unlocked player.
    public var player: String?
    public var response: InvitationResponse?
    public var round: Int?
    public var scores: [String: Int]?
    public var winner: String?
    public var persistent: Bool?
    /// The players of a game that starts, in the game's order.
    public var participants: [String]?
    /// The rounds of a game that starts, with the plan each is played on.
    public var rounds: [PlannedRound]?
    /// The tournament that finished.
    public var tournament: Int64?
    /// An achievement granted: its id, the tier and its title.
    public var achievement: String?
    public var tier: Int?
    public var title: String?
    /// `peerReading`: the filtered RSSI (dBm) `player` read of the recipient's beacon.
    public var rssi: Double?
    /// `peerReading`: the measured power the recipient's beacon advertised.
    public var measuredPower: MeasuredPower?
    /// `peerReading`: the variance (dB²) of `rssi`, when the reporter sent one.
    public var rssiVariance: Double?

    public init(
        game: Int64? = nil, player: String? = nil, response: InvitationResponse? = nil, round: Int? = nil,
        scores: [String: Int]? = nil, winner: String? = nil, persistent: Bool? = nil,
        participants: [String]? = nil, rounds: [PlannedRound]? = nil, tournament: Int64? = nil,
        achievement: String? = nil, tier: Int? = nil, title: String? = nil,
        rssi: Double? = nil, measuredPower: MeasuredPower? = nil, rssiVariance: Double? = nil
    ) {
        self.game = game
        self.player = player
        self.response = response
        self.round = round
        self.scores = scores
        self.winner = winner
        self.persistent = persistent
        self.participants = participants
        self.rounds = rounds
        self.tournament = tournament
        self.achievement = achievement
        self.tier = tier
        self.title = title
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.rssiVariance = rssiVariance
    }
}
