import Foundation
import Synchronization
import Traces

/// Something the agent saw or did, as `nearplay events --json` prints it: one JSON object per
/// line, `{"t":"<ISO 8601>","event":"player_nearby",…}`, keys in a fixed order. Written only by
/// ``jsonLine``; `Decodable` reads it back (the CLI, the demo).
public struct AgentEvent: Decodable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// A player came into range and was recognised.
        case playerNearby = "player_nearby"
        /// A recognised player changed zone or moved noticeably.
        case playerMoved = "player_moved"
        /// A recognised player left range.
        case playerGone = "player_gone"
        case invitationReceived = "invitation_received"
        case invitationAnswered = "invitation_answered"
        /// An invitation to us ran out before we answered.
        case invitationExpired = "invitation_expired"
        case gameStarted = "game_started"
        case gameCancelled = "game_cancelled"
        /// A round is about to be played on this device: `game`, `round`, `minigame`, and in
        /// `message` its instructions and the countdown.
        case roundStarting = "round_starting"
        /// This device played a round and queued its score.
        case roundPlayed = "round_played"
        case roundFinished = "round_finished"
        case gameFinished = "game_finished"
        case unlocked
        case unlockLost = "unlock_lost"
        /// The lobby granted this player an achievement: its title in `message`.
        case achievement
        /// An operation waits in the outgoing queue / reached the lobby / was refused by it.
        case queued, sent, refused
        case lobbyConnected = "lobby_connected"
        case lobbyDisconnected = "lobby_disconnected"
        /// A multiplayer location came into range: `location` (its id), `name`, `beacon`,
        /// distance, zone, and the `tournaments` running there.
        case location
        /// A multiplayer location left range.
        case locationGone = "location_gone"
        /// A tournament we entered was decided: `tournament`, `winner`.
        case tournamentFinished = "tournament_finished"
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

        var jsonObject: String {
            "{\"id\":\(id),\"period\":" + JSONText.string(period) + ",\"ends_at\":" + JSONText.string(AgentEvent.timeFormat.format(endsAt)) + "}"
        }
    }

    public var time: Date
    public var kind: Kind
    public var player: String?
    public var name: String?
    public var beacon: String?
    public var distance: Double?
    public var zone: String?
    /// The location's id (`location`, `location_gone`).
    public var location: Int64?
    public var tournaments: [RunningTournament]?
    public var game: Int64?
    public var tournament: Int64?
    public var round: Int?
    public var minigame: String?
    public var score: Int?
    public var scores: [String: Int]?
    public var winner: String?
    public var response: String?
    public var persistent: Bool?
    public var operation: String?
    public var message: String?

    public init(_ kind: Kind, time: Date = Date(), player: String? = nil, name: String? = nil, beacon: String? = nil,
                distance: Double? = nil, zone: String? = nil, location: Int64? = nil, tournaments: [RunningTournament]? = nil,
                game: Int64? = nil, tournament: Int64? = nil, round: Int? = nil, minigame: String? = nil,
                score: Int? = nil, scores: [String: Int]? = nil, winner: String? = nil, response: String? = nil,
                persistent: Bool? = nil, operation: String? = nil, message: String? = nil) {
        self.time = time
        self.kind = kind
        self.player = player
        self.name = name
        self.beacon = beacon
        self.distance = distance
        self.zone = zone
        self.location = location
        self.tournaments = tournaments
        self.game = game
        self.tournament = tournament
        self.round = round
        self.minigame = minigame
        self.score = score
        self.scores = scores
        self.winner = winner
        self.response = response
        self.persistent = persistent
        self.operation = operation
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case time = "t", kind = "event", player, name, beacon, distance = "distance_m", zone, location, tournaments, game, tournament, round, minigame
        case score, scores, winner, response, persistent, operation, message
    }


    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        time = try Self.decodeTime(c, .time)
        kind = try c.decode(Kind.self, forKey: .kind)
        player = try c.decodeIfPresent(String.self, forKey: .player)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        beacon = try c.decodeIfPresent(String.self, forKey: .beacon)
        distance = try c.decodeIfPresent(Double.self, forKey: .distance)
        zone = try c.decodeIfPresent(String.self, forKey: .zone)
        location = try c.decodeIfPresent(Int64.self, forKey: .location)
        tournaments = try c.decodeIfPresent([RunningTournament].self, forKey: .tournaments)
        game = try c.decodeIfPresent(Int64.self, forKey: .game)
        tournament = try c.decodeIfPresent(Int64.self, forKey: .tournament)
        round = try c.decodeIfPresent(Int.self, forKey: .round)
        minigame = try c.decodeIfPresent(String.self, forKey: .minigame)
        score = try c.decodeIfPresent(Int.self, forKey: .score)
        scores = try c.decodeIfPresent([String: Int].self, forKey: .scores)
        winner = try c.decodeIfPresent(String.self, forKey: .winner)
        response = try c.decodeIfPresent(String.self, forKey: .response)
        persistent = try c.decodeIfPresent(Bool.self, forKey: .persistent)
        operation = try c.decodeIfPresent(String.self, forKey: .operation)
        message = try c.decodeIfPresent(String.self, forKey: .message)
    }

    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func decodeTime<Key: CodingKey>(_ c: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date {
        let text = try c.decode(String.self, forKey: key)
        guard let time = try? Date(text, strategy: Self.timeFormat) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not an ISO 8601 time: \(text)")
        }
        return time
    }

    /// The event as one line of JSON with its keys always in the same order (`t`, `event`, then
    /// who, where (and what runs there), which game or tournament, what), as `nearplay events --json` prints it.
    public var jsonLine: String {
        var parts = ["\"t\":" + JSONText.string(Self.timeFormat.format(time)), "\"event\":" + JSONText.string(kind.rawValue)]
        func add(_ key: String, _ value: String?) { if let value { parts.append("\"\(key)\":" + value) }
        }
        add("player", player.map(JSONText.string))
        add("name", name.map(JSONText.string))
        add("beacon", beacon.map(JSONText.string))
        add("distance_m", distance.map { JSONText.fixed($0, 2) })
        add("zone", zone.map(JSONText.string))
        add("location", location.map { String($0) })
        add("tournaments", tournaments.map { "[" + $0.map(\.jsonObject).joined(separator: ",") + "]" })
        add("game", game.map { String($0) })
        add("tournament", tournament.map { String($0) })
        add("round", round.map { String($0) })
        add("minigame", minigame.map(JSONText.string))
        add("score", score.map { String($0) })
        add("scores", scores.map { "{" + $0.sorted { $0.key < $1.key }.map { JSONText.string($0.key) + ":\($0.value)" }.joined(separator: ",") + "}" })
        add("winner", winner.map(JSONText.string))
        add("response", response.map(JSONText.string))
        add("persistent", persistent.map { $0 ? "true" : "false" })
        add("operation", operation.map(JSONText.string))
        add("message", message.map(JSONText.string))
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// "game 3", or "tournament 7" for a tournament's round.
    private var playedIn: String {
        tournament.map { "tournament \($0)" } ?? "game \(game.map(String.init) ?? "?")"
    }

    /// One line of text for people: what happened, with names and distances.
    public var sentence: String {
        let who = name.map { "\($0) (\(player ?? "?"))" } ?? player ?? "someone"
        let distanceText = distance.map { String(format: "%.1f m", $0) } ?? "distance unknown"
        switch kind {
        case .playerNearby: return "\(who) is nearby, \(distanceText) (\(zone ?? "unknown"))"
        case .playerMoved: return "\(who) is now \(distanceText) away (\(zone ?? "unknown"))"
        case .playerGone: return "\(who) is gone"
        case .invitationReceived: return "\(who) invites you to game \(game.map(String.init) ?? "?")"
        case .invitationAnswered: return "\(who) \(response ?? "answered") game \(game.map(String.init) ?? "?")"
        case .invitationExpired: return "the invitation to game \(game.map(String.init) ?? "?") expired"
        case .gameStarted: return "game \(game.map(String.init) ?? "?") started" + (message.map { ": \($0)" } ?? "")
        case .gameCancelled: return "game \(game.map(String.init) ?? "?") was cancelled"
        case .roundStarting: return "round \(round ?? 0) of \(playedIn): \(minigame ?? "?") — \(message ?? "")"
        case .roundPlayed: return "you played round \(round ?? 0) (\(minigame ?? "?")) of \(playedIn): \(score ?? 0) points"
        case .roundFinished:
            let table = (scores ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "round \(round ?? 0) of game \(game.map(String.init) ?? "?"): \(table)" + (winner.map { ", won by \($0)" } ?? ", no winner")
        case .gameFinished: return "game \(game.map(String.init) ?? "?") finished: " + (winner.map { "\($0) won" } ?? "a draw")
        case .unlocked: return "\(who) unlocked" + (persistent == true ? " for good" : "")
        case .unlockLost: return "\(who) is locked again"
        case .achievement: return "achievement unlocked: \(message ?? "?")"
        case .queued: return "queued \(operation ?? "an operation")"
        case .sent: return "sent \(operation ?? "an operation")" + (message.map { ": \($0)" } ?? "")
        case .refused: return "the lobby refused \(operation ?? "an operation"): \(message ?? "")"
        case .lobbyConnected: return "connected to the lobby"
        case .lobbyDisconnected: return "lost the lobby" + (message.map { ": \($0)" } ?? "")
        case .location:
            let running = (tournaments ?? []).map { "\($0.period) tournament \($0.id)" }
            return "at \(name ?? "a location"), \(distanceText)" + (running.isEmpty ? "" : ": " + running.joined(separator: ", ") + " (`nearplay join ID`)")
        case .locationGone: return "left \(name ?? "the location")"
        case .tournamentFinished:
            return "tournament \(tournament.map(String.init) ?? "?") finished: " + (winner.map { "\($0) won" } ?? "nobody played")
        }
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
