import BeaconKeys
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import Lobby
@testable import LobbyServer

/// The JSON calls a scene is set up with: over the router, a live test server or a `lobby serve`.
protocol SceneHTTP: Sendable {
    func json(_ method: String, _ path: String, token: String?, body: String?) async throws -> (status: Int, body: [String: Any])
}

struct RouterSceneHTTP<Client: TestClientProtocol>: SceneHTTP, @unchecked Sendable {
    let client: Client
    func json(_ method: String, _ path: String, token: String?, body: String?) async throws -> (status: Int, body: [String: Any]) {
        let answer = try await client.call(HTTPRequest.Method(method)!, path, token: token, json: body)
        return (Int(answer.status.code), answer.body)
    }
}

extension HTTPProbe: SceneHTTP {
    func json(_ method: String, _ path: String, token: String?, body: String?) async throws -> (status: Int, body: [String: Any]) {
        let answer = try await call(HTTPRequest.Method(method)!, path, token: token, json: body)
        return (answer.status, answer.body)
    }
}

/// A location for the web view's tests: "Café Nord" (in a zone where it is daytime) with its daily, weekly and
/// monthly tournaments running; alice and bob are there and entered the daily one, alice scored
/// 420 in it; carol is there without entering; dave is registered and was never near anyone.
/// Everyone's password is `password-123`. Rounds are Statue, one per tournament entry.
struct WebScene: Sendable {
    var location: Int
    var daily: Int
    var tokens: [String: String]
    let http: any SceneHTTP

    static let configure: @Sendable (inout LobbyConfiguration) -> Void = { $0.roundsPerGame = 1 }

    static func make(
        _ client: some TestClientProtocol, extraPlayers: [String] = [], registered: () async throws -> Void = {}
    ) async throws -> WebScene {
        try await make(RouterSceneHTTP(client: client), extraPlayers: extraPlayers, registered: registered)
    }

    /// The scene; `extraPlayers` are present and entered too, without a score yet. `registered`
    /// runs once every player is registered, before anything happens at the location.
    static func make(_ http: any SceneHTTP, extraPlayers: [String] = [], registered: () async throws -> Void = {}) async throws -> WebScene {
        var tokens: [String: String] = [:]
        for name in ["owner", "alice", "bob", "carol", "dave"] + extraPlayers {
            let registered = try await http.json("POST", "/v1/players", token: nil, body: """
                {"username":"\(name)","firstName":"F","lastName":"L","email":"\(name)@example.org","password":"password-123"}
                """)
            #expect(registered.status == 201, "registering \(name): \(registered.body)")
            let session = try await http.json("POST", "/v1/sessions", token: nil, body: #"{"username":"\#(name)","password":"password-123"}"#)
            tokens[name] = try #require(session.body["token"] as? String, "\(session.body)")
        }
        try await registered()
        let created = try await http.json("POST", "/v1/locations", token: tokens["owner"], body: #"{"name":"Café Nord","timeZone":"\#(daytimeZone())"}"#)
        let location = try #require(created.body["id"] as? Int, "\(created.body)")
        let tournaments = try #require(created.body["tournaments"] as? [[String: Any]])
        let daily = try #require(tournaments.first { $0["period"] as? String == "daily" }?["id"] as? Int)
        let scene = WebScene(location: location, daily: daily, tokens: tokens, http: http)
        for name in ["alice", "bob", "carol"] + extraPlayers { try await scene.arrive(name) }
        for name in ["alice", "bob"] + extraPlayers { try await scene.enter(name) }
        try await scene.score(420, by: "alice")
        return scene
    }

    /// A zone where it is between 06:00 and 18:00 now, so the daily tournament the scene enters
    /// does not close at the zone's midnight while a test runs (a fixed Europe/Oslo did, once,
    /// at 23:00 UTC).
    static func daytimeZone(at now: Date = Date()) -> String {
        let candidates = ["Europe/Oslo", "Asia/Kolkata", "Asia/Tokyo", "Pacific/Auckland", "America/New_York"]
        return candidates.first { name in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: name)!
            return (6..<18).contains(calendar.component(.hour, from: now))
        } ?? "Europe/Oslo"
    }

    /// `name` reports hearing the location's beacon now (the identity it advertises now, learnt
    /// from the location's key, which only its owner may read).
    func arrive(_ name: String) async throws {
        let key = try await http.json("GET", "/v1/locations/\(location)/beacon-key", token: tokens["owner"], body: nil)
        let secret = try #require(BeaconSecret(base64URL: key.body["secret"] as? String ?? ""), "\(key.body)")
        let period = try #require(RotationPeriod(seconds: key.body["periodSeconds"] as? Int ?? 0))
        let uuid = try #require(key.body["locationUuid"] as? String)
        let (major, minor) = RotatingIdentity.location(secret, period: period.index(at: Date()))
        let now = Date().formatted(Date.ISO8601FormatStyle())
        let answer = try await http.json("POST", "/v1/encounters", token: tokens[name], body: """
            {"sightings":[{"uuid":"\(uuid)","major":\(major),"minor":\(minor),"distance":1.2,"at":"\(now)"}]}
            """)
        #expect(answer.status == 200 && answer.body["recorded"] as? Int == 1, "\(name) at the location: \(answer.body)")
    }

    /// `name` (present at the location) enters the daily tournament.
    func enter(_ name: String) async throws {
        let joined = try await http.json("POST", "/v1/tournaments/\(daily)/entries", token: tokens[name], body: nil)
        #expect(joined.status == 201, "\(name) joining: \(joined.body)")
    }

    /// `name` plays its round of the daily tournament, verified, for `score` points.
    func score(_ score: Int, by name: String) async throws {
        let recording = try #require(SyntheticRecording.scoring(score, game: "statue", duration: 10, calibration: .init()))
        let json = String(decoding: try JSONEncoder().encode(recording), as: UTF8.self)
        let scored = try await http.json("POST", "/v1/tournaments/\(daily)/entries/me/rounds/1/scores", token: tokens[name],
                                         body: #"{"score":\#(score),"key":"web-\#(name)","recording":\#(json)}"#)
        #expect(scored.status == 201, "\(name) scoring: \(scored.body)")
    }
}
