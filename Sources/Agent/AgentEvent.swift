import BeaconFrames
import Foundation
import LobbyClient
import Minigames
import Ranging
import Synchronization
import SystemSupport
import Traces

/// Something the agent saw or did, as `nearplay events --json` prints it: one JSON object per
/// line, `{"t":"<ISO 8601>","event":"player_nearby",…}`, keys in the fixed order README documents.
///
/// One case per kind, each with what that kind carries and nothing else; `at` is when it happened
/// (the lobby's time for what the lobby reports). Fields that come from the lobby's event feed are
/// optional where the feed's are. ``encode(to:)`` defines the JSON (written by ``jsonLine``) and
/// `init(from:)` reads it back (the CLI, the demo).
public enum AgentEvent: Sendable, Equatable {
    /// A player came into range and was recognised.
    case playerNearby(PlayerInRange, at: Date = Date())
    /// A recognised player changed zone or moved noticeably.
    case playerMoved(PlayerInRange, at: Date = Date())
    /// A recognised player left range. `name` is absent when the player left before being resolved.
    case playerGone(player: String, name: String?, beacon: BeaconIdentity, at: Date = Date())
    case invitationReceived(from: String?, game: Int64?, at: Date = Date())
    case invitationAnswered(by: String?, game: Int64?, response: InvitationResponse?, at: Date = Date())
    /// An invitation to us ran out before we answered.
    case invitationExpired(game: Int64?, at: Date = Date())
    /// `plan`: who plays and the minigames of its rounds, `alice vs bob: statue, shaker`.
    case gameStarted(game: Int64?, plan: String?, at: Date = Date())
    case gameCancelled(game: Int64?, at: Date = Date())
    /// A round is about to be played on this device: its instructions and the countdown.
    case roundStarting(Contest, round: Int, minigame: MinigameName, instructions: String, at: Date = Date())
    /// This device played a round and queued its score.
    case roundPlayed(Contest, round: Int, minigame: MinigameName, score: Int, at: Date = Date())
    case roundFinished(game: Int64?, round: Int?, scores: [String: Int]?, winner: String?, at: Date = Date())
    case gameFinished(game: Int64?, winner: String?, at: Date = Date())
    case unlocked(player: String?, persistent: Bool?, at: Date = Date())
    case unlockLost(player: String?, at: Date = Date())
    /// The lobby granted this player an achievement: its title.
    case achievement(title: String?, at: Date = Date())
    /// An operation waits in the outgoing queue.
    case queued(operation: String, at: Date = Date())
    /// An operation reached the lobby.
    case sent(operation: String, at: Date = Date())
    /// The lobby refused an operation, saying why.
    case refused(operation: String, reason: String, at: Date = Date())
    case lobbyConnected(at: Date = Date())
    case lobbyDisconnected(reason: String?, at: Date = Date())
    /// A multiplayer location came into range, with the tournaments running there.
    case location(LocationInRange, at: Date = Date())
    /// A multiplayer location left range.
    case locationGone(location: Int64, name: String, beacon: BeaconIdentity, at: Date = Date())
    /// A tournament we entered was decided.
    case tournamentFinished(tournament: Int64?, winner: String?, at: Date = Date())

    /// The `event` word of each case.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case playerNearby = "player_nearby", playerMoved = "player_moved", playerGone = "player_gone"
        case invitationReceived = "invitation_received", invitationAnswered = "invitation_answered"
        case invitationExpired = "invitation_expired"
        case gameStarted = "game_started", gameCancelled = "game_cancelled"
        case roundStarting = "round_starting", roundPlayed = "round_played", roundFinished = "round_finished"
        case gameFinished = "game_finished"
        case unlocked, unlockLost = "unlock_lost", achievement
        case queued, sent, refused
        case lobbyConnected = "lobby_connected", lobbyDisconnected = "lobby_disconnected"
        case location, locationGone = "location_gone"
        case tournamentFinished = "tournament_finished"
    }

    /// What a round belongs to: a game (`"game":ID`) or a tournament (`"tournament":ID`).
    public enum Contest: Sendable, Equatable {
        case game(Int64)
        case tournament(Int64)
    }

    /// A recognised player in range, as the player events describe them.
    public struct PlayerInRange: Sendable, Equatable {
        public var player: String
        public var name: String
        public var beacon: BeaconIdentity?
        /// Metres; nil while no estimate stands.
        public var distance: Double?
        /// The interval meant to hold the true distance about 68 % of the time (metres).
        public var interval: ClosedRange<Double>?
        /// Whether the player's own reading of us was combined with ours; nil without a distance.
        public var ranging: RangingMethod?
        public var zone: Zone

        public init(player: String, name: String, beacon: BeaconIdentity? = nil, distance: Double?, interval: ClosedRange<Double>? = nil,
                    ranging: RangingMethod? = nil, zone: Zone) {
            self.player = player
            self.name = name
            self.beacon = beacon
            self.distance = distance
            self.interval = interval
            self.ranging = ranging
            self.zone = zone
        }
    }

    /// A multiplayer location in range, as the `location` event describes it.
    public struct LocationInRange: Sendable, Equatable {
        /// The location's id.
        public var location: Int64
        public var name: String
        public var beacon: BeaconIdentity
        /// Metres; nil while no estimate stands.
        public var distance: Double?
        public var zone: Zone
        /// The tournaments open there.
        public var tournaments: [RunningTournament]

        public init(location: Int64, name: String, beacon: BeaconIdentity, distance: Double?, zone: Zone, tournaments: [RunningTournament]) {
            self.location = location
            self.name = name
            self.beacon = beacon
            self.distance = distance
            self.zone = zone
            self.tournaments = tournaments
        }
    }

    /// A tournament running at a location, as the `location` event lists it.
    public struct RunningTournament: Codable, Sendable, Equatable {
        public var id: Int64
        /// `daily`, `weekly` or `monthly`.
        public var period: String
        public var endsAt: Date

        public init(id: Int64, period: String, endsAt: Date) {
            self.id = id
            self.period = period
            self.endsAt = endsAt
        }

        enum CodingKeys: String, CodingKey { case id, period, endsAt = "ends_at" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(Int64.self, forKey: .id)
            period = try c.decode(String.self, forKey: .period)
            endsAt = try AgentEvent.decodeTime(c, .endsAt)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(period, forKey: .period)
            try c.encode(AgentEvent.timeFormat.format(endsAt), forKey: .endsAt)
        }
    }

    public var kind: Kind {
        switch self {
        case .playerNearby: .playerNearby
        case .playerMoved: .playerMoved
        case .playerGone: .playerGone
        case .invitationReceived: .invitationReceived
        case .invitationAnswered: .invitationAnswered
        case .invitationExpired: .invitationExpired
        case .gameStarted: .gameStarted
        case .gameCancelled: .gameCancelled
        case .roundStarting: .roundStarting
        case .roundPlayed: .roundPlayed
        case .roundFinished: .roundFinished
        case .gameFinished: .gameFinished
        case .unlocked: .unlocked
        case .unlockLost: .unlockLost
        case .achievement: .achievement
        case .queued: .queued
        case .sent: .sent
        case .refused: .refused
        case .lobbyConnected: .lobbyConnected
        case .lobbyDisconnected: .lobbyDisconnected
        case .location: .location
        case .locationGone: .locationGone
        case .tournamentFinished: .tournamentFinished
        }
    }

    /// When it happened.
    public var time: Date {
        switch self {
        case .playerNearby(_, let at), .playerMoved(_, let at), .playerGone(_, _, _, let at), .invitationReceived(_, _, let at),
             .invitationAnswered(_, _, _, let at), .invitationExpired(_, let at), .gameStarted(_, _, let at), .gameCancelled(_, let at),
             .roundStarting(_, _, _, _, let at), .roundPlayed(_, _, _, _, let at), .roundFinished(_, _, _, _, let at),
             .gameFinished(_, _, let at), .unlocked(_, _, let at), .unlockLost(_, let at), .achievement(_, let at), .queued(_, let at),
             .sent(_, let at), .refused(_, _, let at), .lobbyConnected(let at), .lobbyDisconnected(_, let at), .location(_, let at),
             .locationGone(_, _, _, let at), .tournamentFinished(_, _, let at):
            at
        }
    }

    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func decodeTime<Key: CodingKey>(_ c: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date {
        let text = try c.decode(String.self, forKey: key)
        guard let time = try? Date(text, strategy: Self.timeFormat) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not an ISO 8601 time: \(text)")
        }
        return time
    }

    /// The event as one line of JSON, as `nearplay events --json` prints it: ``encode(to:)``
    /// written by `JSONWriter`, which keeps its key order.
    public var jsonLine: String {
        var json = JSONWriter(escaping: .minimal)
        do {
            try json.encodable(self)
        } catch {
            // Nothing in an event fails to encode; say so loudly in debug builds if that changes.
            assertionFailure("an agent event did not encode: \(error)")
            json = JSONWriter(escaping: .minimal)
            json.object { json in
                json.member("t", Self.timeFormat.format(time))
                json.member("event", kind.rawValue)
            }
        }
        return json.text
    }
}

extension AgentEvent: Codable {
    /// Every key an event may have, in the order they are written: `t`, `event`, then who,
    /// where (and what runs there), which game or tournament, what.
    enum CodingKeys: String, CodingKey {
        case time = "t", kind = "event", player, name, beacon, distance = "distance_m", distanceLow = "distance_lo_m"
        case distanceHigh = "distance_hi_m", ranging, zone, location, tournaments, game, tournament, round, minigame
        case score, scores, winner, response, persistent, operation, message
    }

    /// Writes `t`, `event`, then the case's keys in ``CodingKeys`` order, each only when it has a
    /// value; distances with two decimals, scores by player name.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.timeFormat.format(time), forKey: .time)
        try c.encode(kind.rawValue, forKey: .kind)
        func metres(_ value: Double?, _ key: CodingKeys) throws {
            if let value { try c.encode(JSONFixedNumber(value: value, places: 2), forKey: key) }
        }
        func contest(_ contest: Contest) throws {
            switch contest {
            case .game(let id): try c.encode(id, forKey: .game)
            case .tournament(let id): try c.encode(id, forKey: .tournament)
            }
        }
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _):
            try c.encode(p.player, forKey: .player)
            try c.encode(p.name, forKey: .name)
            try c.encodeIfPresent(p.beacon?.description, forKey: .beacon)
            try metres(p.distance, .distance)
            try metres(p.interval?.lowerBound, .distanceLow)
            try metres(p.interval?.upperBound, .distanceHigh)
            try c.encodeIfPresent(p.ranging?.rawValue, forKey: .ranging)
            try c.encode(p.zone.rawValue, forKey: .zone)
        case .playerGone(let player, let name, let beacon, _):
            try c.encode(player, forKey: .player)
            try c.encodeIfPresent(name, forKey: .name)
            try c.encode(beacon.description, forKey: .beacon)
        case .invitationReceived(let player, let game, _):
            try c.encodeIfPresent(player, forKey: .player)
            try c.encodeIfPresent(game, forKey: .game)
        case .invitationAnswered(let player, let game, let response, _):
            try c.encodeIfPresent(player, forKey: .player)
            try c.encodeIfPresent(game, forKey: .game)
            try c.encodeIfPresent(response?.rawValue, forKey: .response)
        case .invitationExpired(let game, _), .gameCancelled(let game, _):
            try c.encodeIfPresent(game, forKey: .game)
        case .gameStarted(let game, let plan, _):
            try c.encodeIfPresent(game, forKey: .game)
            try c.encodeIfPresent(plan, forKey: .message)
        case .roundStarting(let of, let round, let minigame, let instructions, _):
            try contest(of)
            try c.encode(round, forKey: .round)
            try c.encode(minigame.rawValue, forKey: .minigame)
            try c.encode(instructions, forKey: .message)
        case .roundPlayed(let of, let round, let minigame, let score, _):
            try contest(of)
            try c.encode(round, forKey: .round)
            try c.encode(minigame.rawValue, forKey: .minigame)
            try c.encode(score, forKey: .score)
        case .roundFinished(let game, let round, let scores, let winner, _):
            try c.encodeIfPresent(game, forKey: .game)
            try c.encodeIfPresent(round, forKey: .round)
            if let scores {
                var byPlayer = c.nestedContainer(keyedBy: PlayerKey.self, forKey: .scores)
                for (player, score) in scores.sorted(by: { $0.key < $1.key }) { try byPlayer.encode(score, forKey: PlayerKey(player)) }
            }
            try c.encodeIfPresent(winner, forKey: .winner)
        case .gameFinished(let game, let winner, _):
            try c.encodeIfPresent(game, forKey: .game)
            try c.encodeIfPresent(winner, forKey: .winner)
        case .unlocked(let player, let persistent, _):
            try c.encodeIfPresent(player, forKey: .player)
            try c.encodeIfPresent(persistent, forKey: .persistent)
        case .unlockLost(let player, _):
            try c.encodeIfPresent(player, forKey: .player)
        case .achievement(let title, _):
            try c.encodeIfPresent(title, forKey: .message)
        case .queued(let operation, _), .sent(let operation, _):
            try c.encode(operation, forKey: .operation)
        case .refused(let operation, let reason, _):
            try c.encode(operation, forKey: .operation)
            try c.encode(reason, forKey: .message)
        case .lobbyConnected:
            break
        case .lobbyDisconnected(let reason, _):
            try c.encodeIfPresent(reason, forKey: .message)
        case .location(let l, _):
            try c.encode(l.name, forKey: .name)
            try c.encode(l.beacon.description, forKey: .beacon)
            try metres(l.distance, .distance)
            try c.encode(l.zone.rawValue, forKey: .zone)
            try c.encode(l.location, forKey: .location)
            try c.encode(l.tournaments, forKey: .tournaments)
        case .locationGone(let location, let name, let beacon, _):
            try c.encode(name, forKey: .name)
            try c.encode(beacon.description, forKey: .beacon)
            try c.encode(location, forKey: .location)
        case .tournamentFinished(let tournament, let winner, _):
            try c.encodeIfPresent(tournament, forKey: .tournament)
            try c.encodeIfPresent(winner, forKey: .winner)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let at = try Self.decodeTime(c, .time)
        func text(_ key: CodingKeys) throws -> String? { try c.decodeIfPresent(String.self, forKey: key) }
        func id(_ key: CodingKeys) throws -> Int64? { try c.decodeIfPresent(Int64.self, forKey: key) }
        func beacon() throws -> BeaconIdentity {
            let written = try c.decode(String.self, forKey: .beacon)
            guard let identity = BeaconIdentity(written) else {
                throw DecodingError.dataCorruptedError(forKey: .beacon, in: c, debugDescription: "not a beacon identity: \(written)")
            }
            return identity
        }
        func zone() throws -> Zone {
            let written = try c.decode(String.self, forKey: .zone)
            guard let zone = Zone(rawValue: written) else {
                throw DecodingError.dataCorruptedError(forKey: .zone, in: c, debugDescription: "not a zone: \(written)")
            }
            return zone
        }
        func contest() throws -> Contest {
            if let tournament = try id(.tournament) { return .tournament(tournament) }
            return .game(try c.decode(Int64.self, forKey: .game))
        }
        func minigame() throws -> MinigameName { try c.decode(MinigameName.self, forKey: .minigame) }
        let kind = try c.decode(Kind.self, forKey: .kind)
        switch kind {
        case .playerNearby, .playerMoved:
            let low = try c.decodeIfPresent(Double.self, forKey: .distanceLow), high = try c.decodeIfPresent(Double.self, forKey: .distanceHigh)
            let player = PlayerInRange(
                player: try c.decode(String.self, forKey: .player), name: try c.decode(String.self, forKey: .name),
                beacon: c.contains(.beacon) ? try beacon() : nil, distance: try c.decodeIfPresent(Double.self, forKey: .distance),
                interval: low.flatMap { low in high.flatMap { low <= $0 ? low...$0 : nil } },
                ranging: try text(.ranging).flatMap(RangingMethod.init(rawValue:)), zone: try zone())
            self = kind == .playerNearby ? .playerNearby(player, at: at) : .playerMoved(player, at: at)
        case .playerGone:
            self = .playerGone(player: try c.decode(String.self, forKey: .player), name: try text(.name), beacon: try beacon(), at: at)
        case .invitationReceived:
            self = .invitationReceived(from: try text(.player), game: try id(.game), at: at)
        case .invitationAnswered:
            self = .invitationAnswered(by: try text(.player), game: try id(.game),
                                       response: try c.decodeIfPresent(InvitationResponse.self, forKey: .response), at: at)
        case .invitationExpired:
            self = .invitationExpired(game: try id(.game), at: at)
        case .gameStarted:
            self = .gameStarted(game: try id(.game), plan: try text(.message), at: at)
        case .gameCancelled:
            self = .gameCancelled(game: try id(.game), at: at)
        case .roundStarting:
            self = .roundStarting(try contest(), round: try c.decode(Int.self, forKey: .round), minigame: try minigame(),
                                  instructions: try c.decode(String.self, forKey: .message), at: at)
        case .roundPlayed:
            self = .roundPlayed(try contest(), round: try c.decode(Int.self, forKey: .round), minigame: try minigame(),
                                score: try c.decode(Int.self, forKey: .score), at: at)
        case .roundFinished:
            self = .roundFinished(game: try id(.game), round: try c.decodeIfPresent(Int.self, forKey: .round),
                                  scores: try c.decodeIfPresent([String: Int].self, forKey: .scores), winner: try text(.winner), at: at)
        case .gameFinished:
            self = .gameFinished(game: try id(.game), winner: try text(.winner), at: at)
        case .unlocked:
            self = .unlocked(player: try text(.player), persistent: try c.decodeIfPresent(Bool.self, forKey: .persistent), at: at)
        case .unlockLost:
            self = .unlockLost(player: try text(.player), at: at)
        case .achievement:
            self = .achievement(title: try text(.message), at: at)
        case .queued:
            self = .queued(operation: try c.decode(String.self, forKey: .operation), at: at)
        case .sent:
            self = .sent(operation: try c.decode(String.self, forKey: .operation), at: at)
        case .refused:
            self = .refused(operation: try c.decode(String.self, forKey: .operation), reason: try c.decode(String.self, forKey: .message), at: at)
        case .lobbyConnected:
            self = .lobbyConnected(at: at)
        case .lobbyDisconnected:
            self = .lobbyDisconnected(reason: try text(.message), at: at)
        case .location:
            self = .location(LocationInRange(location: try c.decode(Int64.self, forKey: .location), name: try c.decode(String.self, forKey: .name),
                                             beacon: try beacon(), distance: try c.decodeIfPresent(Double.self, forKey: .distance), zone: try zone(),
                                             tournaments: try c.decode([RunningTournament].self, forKey: .tournaments)), at: at)
        case .locationGone:
            self = .locationGone(location: try c.decode(Int64.self, forKey: .location), name: try c.decode(String.self, forKey: .name),
                                 beacon: try beacon(), at: at)
        case .tournamentFinished:
            self = .tournamentFinished(tournament: try id(.tournament), winner: try text(.winner), at: at)
        }
    }

    /// A player's name as a key of `scores`.
    private struct PlayerKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension AgentEvent {
    private static func distanceText(_ distance: Double?, _ interval: ClosedRange<Double>?) -> String {
        distance.map { DistanceText.estimate($0, interval: interval) } ?? "distance unknown"
    }

    /// One line of text for people: what happened, with names and distances.
    public var sentence: String {
        func who(_ player: String?, _ name: String? = nil) -> String { name.map { "\($0) (\(player ?? "?"))" } ?? player ?? "someone" }
        func game(_ id: Int64?) -> String { id.map(String.init) ?? "?" }
        func playedIn(_ contest: Contest) -> String {
            switch contest {
            case .game(let id): "game \(id)"
            case .tournament(let id): "tournament \(id)"
            }
        }
        switch self {
        case .playerNearby(let p, _):
            return "\(who(p.player, p.name)) is nearby, \(Self.distanceText(p.distance, p.interval)) (\(p.zone.rawValue))"
        case .playerMoved(let p, _):
            return "\(who(p.player, p.name)) is now \(Self.distanceText(p.distance, p.interval)) away (\(p.zone.rawValue))"
        case .playerGone(let player, let name, _, _): return "\(who(player, name)) is gone"
        case .invitationReceived(let player, let id, _): return "\(who(player)) invites you to game \(game(id))"
        case .invitationAnswered(let player, let id, let response, _):
            return "\(who(player)) \(response?.rawValue ?? "answered") game \(game(id))"
        case .invitationExpired(let id, _): return "the invitation to game \(game(id)) expired"
        case .gameStarted(let id, let plan, _): return "game \(game(id)) started" + (plan.map { ": \($0)" } ?? "")
        case .gameCancelled(let id, _): return "game \(game(id)) was cancelled"
        case .roundStarting(let of, let round, let minigame, let instructions, _):
            return "round \(round) of \(playedIn(of)): \(minigame.rawValue) — \(instructions)"
        case .roundPlayed(let of, let round, let minigame, let score, _):
            return "you played round \(round) (\(minigame.rawValue)) of \(playedIn(of)): \(score) points"
        case .roundFinished(let id, let round, let scores, let winner, _):
            let table = (scores ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "round \(round ?? 0) of game \(game(id)): \(table)" + (winner.map { ", won by \($0)" } ?? ", no winner")
        case .gameFinished(let id, let winner, _): return "game \(game(id)) finished: " + (winner.map { "\($0) won" } ?? "a draw")
        case .unlocked(let player, let persistent, _): return "\(who(player)) unlocked" + (persistent == true ? " for good" : "")
        case .unlockLost(let player, _): return "\(who(player)) is locked again"
        case .achievement(let title, _): return "achievement unlocked: \(title ?? "?")"
        case .queued(let operation, _): return "queued \(operation)"
        case .sent(let operation, _): return "sent \(operation)"
        case .refused(let operation, let reason, _): return "the lobby refused \(operation): \(reason)"
        case .lobbyConnected: return "connected to the lobby"
        case .lobbyDisconnected(let reason, _): return "lost the lobby" + (reason.map { ": \($0)" } ?? "")
        case .location(let l, _):
            let running = l.tournaments.map { "\($0.period) tournament \($0.id)" }
            return "at \(l.name), \(Self.distanceText(l.distance, nil))" + (running.isEmpty ? "" : ": " + running.joined(separator: ", ") + " (`nearplay join ID`)")
        case .locationGone(_, let name, _, _): return "left \(name)"
        case .tournamentFinished(let tournament, let winner, _):
            return "tournament \(game(tournament)) finished: " + (winner.map { "\($0) won" } ?? "nobody played")
        }
    }
}

/// What readers that filter the stream ask of any event (the CLI, the demo, tests): nil for the
/// kinds that do not carry it. Code that acts on one kind matches its case instead.
extension AgentEvent {
    /// The player the event is about.
    public var player: String? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.player
        case .playerGone(let player, _, _, _): player
        case .invitationReceived(let player, _, _), .invitationAnswered(let player, _, _, _), .unlocked(let player, _, _),
             .unlockLost(let player, _):
            player
        default: nil
        }
    }

    /// The display name of the player or location the event is about.
    public var name: String? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.name
        case .playerGone(_, let name, _, _): name
        case .location(let l, _): l.name
        case .locationGone(_, let name, _, _): name
        default: nil
        }
    }

    /// The beacon identity of the player or location the event is about, as written.
    public var beacon: String? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.beacon?.description
        case .playerGone(_, _, let beacon, _), .locationGone(_, _, let beacon, _): beacon.description
        case .location(let l, _): l.beacon.description
        default: nil
        }
    }

    /// The id of the location the event is about.
    public var location: Int64? {
        switch self {
        case .location(let l, _): l.location
        case .locationGone(let id, _, _, _): id
        default: nil
        }
    }

    /// The game the event is about.
    public var game: Int64? {
        switch self {
        case .invitationReceived(_, let game, _), .invitationAnswered(_, let game, _, _), .invitationExpired(let game, _),
             .gameStarted(let game, _, _), .gameCancelled(let game, _), .roundFinished(let game, _, _, _, _), .gameFinished(let game, _, _):
            game
        case .roundStarting(.game(let game), _, _, _, _), .roundPlayed(.game(let game), _, _, _, _): game
        default: nil
        }
    }

    /// The tournament the event is about.
    public var tournament: Int64? {
        switch self {
        case .roundStarting(.tournament(let id), _, _, _, _), .roundPlayed(.tournament(let id), _, _, _, _): id
        case .tournamentFinished(let id, _, _): id
        default: nil
        }
    }

    /// The round the event is about.
    public var round: Int? {
        switch self {
        case .roundStarting(_, let round, _, _, _), .roundPlayed(_, let round, _, _, _): round
        case .roundFinished(_, let round, _, _, _): round
        default: nil
        }
    }

    /// Metres to the player or location in range.
    public var distance: Double? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.distance
        case .location(let l, _): l.distance
        default: nil
        }
    }

    /// The lower end of the player's distance interval.
    public var distanceLow: Double? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.interval?.lowerBound
        default: nil
        }
    }

    /// The upper end of the player's distance interval.
    public var distanceHigh: Double? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.interval?.upperBound
        default: nil
        }
    }

    /// The zone of the player or location in range, as written (`near`).
    public var zone: String? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.zone.rawValue
        case .location(let l, _): l.zone.rawValue
        default: nil
        }
    }

    /// `two-way` or `one-way`, for a player in range with a distance.
    public var ranging: String? {
        switch self {
        case .playerNearby(let p, _), .playerMoved(let p, _): p.ranging?.rawValue
        default: nil
        }
    }

    /// The queued, sent or refused operation.
    public var operation: String? {
        switch self {
        case .queued(let operation, _), .sent(let operation, _), .refused(let operation, _, _): operation
        default: nil
        }
    }

    /// The event's text, as its `message` key carries it: a game's plan, a round's instructions,
    /// an achievement's title, why the lobby refused or was lost.
    public var message: String? {
        switch self {
        case .gameStarted(_, let text, _), .achievement(let text, _), .lobbyDisconnected(let text, _): text
        case .roundStarting(_, _, _, let instructions, _): instructions
        case .refused(_, let reason, _): reason
        default: nil
        }
    }

    /// The winner of a round, game or tournament.
    public var winner: String? {
        switch self {
        case .roundFinished(_, _, _, let winner, _), .gameFinished(_, let winner, _), .tournamentFinished(_, let winner, _): winner
        default: nil
        }
    }

    /// A finished round's scores by player.
    public var scores: [String: Int]? {
        if case .roundFinished(_, _, let scores, _, _) = self { return scores }
        return nil
    }

    /// Whether an unlock is for good.
    public var persistent: Bool? {
        if case .unlocked(_, let persistent, _) = self { return persistent }
        return nil
    }

    /// The tournaments running at a location in range.
    public var tournaments: [RunningTournament]? {
        if case .location(let l, _) = self { return l.tournaments }
        return nil
    }
}

/// Hands every event to every current subscriber (the local API's `events` streams, the
/// notifier). A subscriber that falls behind loses its oldest events, never blocks the agent.
///
/// It also keeps the last ``historyLimit`` events, so a client that connects late (`nearplay
/// events --recent N`, the demo) can see what it missed, with no gap and nothing twice.
public final class AgentEventBus: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<AgentEvent>.Continuation] = [:]
        var history: [AgentEvent] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// How many past events are kept for late subscribers.
    public static let historyLimit = AgentRequest.recentLimit

    public init() {}

    public func publish(_ event: AgentEvent) {
        // Delivered under the lock, so a subscriber taking the history sees each event once.
        state.withLock { state in
            state.history.append(event)
            if state.history.count > Self.historyLimit { state.history.removeFirst(state.history.count - Self.historyLimit) }
            for continuation in state.subscribers.values { continuation.yield(event) }
        }
    }

    /// A stream of the last `recent` events, then every event from now on; it ends when the
    /// consumer stops iterating.
    public func subscribe(recent: Int = 0, buffer: Int = 1024) -> AsyncStream<AgentEvent> {
        let (stream, continuation) = AsyncStream<AgentEvent>.makeStream(bufferingPolicy: .bufferingNewest(buffer + Self.historyLimit))
        let id = state.withLock { state -> UInt64 in
            for event in state.history.suffix(max(0, min(recent, Self.historyLimit))) { continuation.yield(event) }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// How many streams are open.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    public func finish() {
        let current = state.withLock { s in defer { s.subscribers.removeAll() }; return Array(s.subscribers.values) }
        for continuation in current { continuation.finish() }
    }
}
