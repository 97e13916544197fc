import Foundation
import SystemSupport

/// A request to the agent's local API: one JSON object on one line, `{"verb":"invite","players":["bob"]}`.
public enum AgentRequest: Sendable, Equatable {
    /// The agent's own state: who it runs as, the radio, the lobby link, the queue.
    case status
    /// The agent's metrics in the Prometheus text format.
    case metrics
    case nearby
    case invite(players: [String])
    case invitations
    case accept(invitation: Int64)
    case decline(invitation: Int64)
    case games
    /// Plays this player's next round of a game on the sensors and submits it.
    case play(game: Int64)
    case stats(player: String)
    /// A page of a board: `day`, `week`, `month`, `all` or `league`.
    case leaderboard(board: String, date: String? = nil, offset: Int = 0, limit: Int = 20)
    case achievements
    case unlocked
    case block(player: String)
    /// Multiplayer locations in range, with the tournaments they ran when they came into range.
    case locations
    /// The running tournaments of a location (`location`), or of every location in range, fresh from the lobby.
    case tournaments(location: Int64? = nil)
    /// Joins a tournament at a location in range and plays its rounds on the sensors.
    case join(tournament: Int64)
    /// The last `recent` events (at most ``recentLimit``), then every event from
    /// now on, one per line, until the client hangs up.
    case events(recent: Int = 0)

    /// How many past events `events` can ask for; the agent's event bus keeps that many.
    public static let recentLimit = 256

    public static let verbs = ["status", "metrics", "nearby", "invite", "invitations", "accept", "decline", "games", "play",
                               "stats", "leaderboard", "achievements", "unlocked", "block", "locations", "tournaments", "join", "events"]

    private struct Fields: Decodable {
        var verb: String?
        var players: [String]?
        var id: Int64?
        var game: Int64?
        var player: String?
        var recent: Int?
        var board: String?
        var date: String?
        var offset: Int?
        var limit: Int?
        var location: Int64?
        var tournament: Int64?
    }

    /// Parses one request line; the error names the field at fault.
    public init(line: some StringProtocol) throws(AgentError) {
        let data = Data(String(line).utf8)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw AgentError("The request is not a JSON object: send one per line, e.g. {\"verb\":\"nearby\"}.", code: "badRequest")
        }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: data)
        } catch {
            throw AgentError(describe(error), code: "badRequest")
        }
        guard let verb = fields.verb else {
            throw AgentError("verb: missing; one of \(Self.verbs.joined(separator: ", ")).", code: "badRequest")
        }
        func player() throws(AgentError) -> String {
            guard let name = fields.player, (1...64).contains(name.count) else {
                throw AgentError("player: expected a username (1 to 64 characters).", code: "badRequest")
            }
            return name
        }
        func identifier(_ key: String, _ value: Int64?) throws(AgentError) -> Int64 {
            guard let value, value > 0 else { throw AgentError("\(key): expected a positive whole number.", code: "badRequest") }
            return value
        }
        switch verb {
        case "status": self = .status
        case "metrics": self = .metrics
        case "nearby": self = .nearby
        case "invitations": self = .invitations
        case "games": self = .games
        case "unlocked": self = .unlocked
        case "achievements": self = .achievements
        case "leaderboard":
            guard let board = fields.board, (1...64).contains(board.count) else {
                throw AgentError("board: expected day, week, month, all or league.", code: "badRequest")
            }
            guard (0...).contains(fields.offset ?? 0) else { throw AgentError("offset: expected 0 or more.", code: "badRequest") }
            guard (1...100).contains(fields.limit ?? 20) else { throw AgentError("limit: expected 1 to 100 entries.", code: "badRequest") }
            self = .leaderboard(board: board, date: fields.date, offset: fields.offset ?? 0, limit: fields.limit ?? 20)
        case "events":
            guard (0...Self.recentLimit).contains(fields.recent ?? 0) else {
                throw AgentError("recent: expected 0 to \(Self.recentLimit) past events.", code: "badRequest")
            }
            self = .events(recent: fields.recent ?? 0)
        case "invite":
            guard let players = fields.players, (1...20).contains(players.count),
                  players.allSatisfy({ (1...64).contains($0.count) }) else {
                throw AgentError("players: expected a list of 1 to 20 usernames.", code: "badRequest")
            }
            self = .invite(players: players)
        case "accept": self = .accept(invitation: try identifier("id", fields.id))
        case "decline": self = .decline(invitation: try identifier("id", fields.id))
        case "play": self = .play(game: try identifier("game", fields.game))
        case "stats": self = .stats(player: try player())
        case "block": self = .block(player: try player())
        case "locations": self = .locations
        case "tournaments":
            var location: Int64?
            if let value = fields.location { location = try identifier("location", value) }
            self = .tournaments(location: location)
        case "join": self = .join(tournament: try identifier("tournament", fields.tournament))
        default:
            throw AgentError("verb: \(verb.debugDescription) is not a verb of this agent; one of \(Self.verbs.joined(separator: ", ")).", code: "badRequest")
        }
    }

    /// The request as one line of JSON.
    public var line: String {
        func json(_ object: [String: Any]) -> String {
            String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        }
        switch self {
        case .status: return json(["verb": "status"])
        case .metrics: return json(["verb": "metrics"])
        case .nearby: return json(["verb": "nearby"])
        case .invite(let players): return json(["verb": "invite", "players": players])
        case .invitations: return json(["verb": "invitations"])
        case .accept(let id): return json(["verb": "accept", "id": id])
        case .decline(let id): return json(["verb": "decline", "id": id])
        case .games: return json(["verb": "games"])
        case .play(let game): return json(["verb": "play", "game": game])
        case .stats(let player): return json(["verb": "stats", "player": player])
        case .leaderboard(let board, let date, let offset, let limit):
            var object: [String: Any] = ["verb": "leaderboard", "board": board, "offset": offset, "limit": limit]
            if let date { object["date"] = date }
            return json(object)
        case .achievements: return json(["verb": "achievements"])
        case .unlocked: return json(["verb": "unlocked"])
        case .block(let player): return json(["verb": "block", "player": player])
        case .locations: return json(["verb": "locations"])
        case .tournaments(let location): return json(location.map { ["verb": "tournaments", "location": $0] } ?? ["verb": "tournaments"])
        case .join(let tournament): return json(["verb": "join", "tournament": tournament])
        case .events(let recent): return json(recent > 0 ? ["verb": "events", "recent": recent] : ["verb": "events"])
        }
    }
}

/// The answer to one request: `{"ok":true,"result":…}` or `{"ok":false,"error":{"code":…,"message":…}}`.
public enum AgentResponse: Sendable, Equatable {
    /// The result as JSON text.
    case result(Data)
    case failure(AgentError)

    public static func encoding(_ value: some Encodable) -> AgentResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        do {
            return .result(try encoder.encode(value))
        } catch {
            return .failure(AgentError("The agent could not encode its answer: \(error).", code: "internal"))
        }
    }

    /// The response as one line, its members in the order the README documents (`ok` first: the
    /// client tells a refusal in an event stream by that prefix).
    public var line: String {
        var json = JSONWriter(capacity: 128, escaping: .minimal)
        json.object { json in
            switch self {
            case .result(let data):
                json.member("ok", true)
                json.key("result")
                json.raw(String(decoding: data, as: UTF8.self))
            case .failure(let error):
                json.member("ok", false)
                json.key("error")
                json.object { json in
                    json.member("code", error.code)
                    json.member("message", error.message)
                }
            }
        }
        return json.text
    }

    /// Parses a response line (the client side).
    public init(line: some StringProtocol) throws(AgentError) {
        guard let data = String(line).data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let ok = object["ok"] as? Bool else {
            throw AgentError("The agent answered something that is not a response: \(line.prefix(200))", code: "badResponse")
        }
        if ok {
            guard let result = object["result"],
                  let data = try? JSONSerialization.data(withJSONObject: result, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]) else {
                throw AgentError("The agent's response has no result.", code: "badResponse")
            }
            self = .result(data)
        } else {
            let error = object["error"] as? [String: Any]
            self = .failure(AgentError(error?["message"] as? String ?? "The agent failed without saying why.",
                                       code: error?["code"] as? String ?? "failed"))
        }
    }
}
