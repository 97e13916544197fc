import Foundation
import HummingbirdTesting
import Testing
@testable import Lobby
@testable import LobbyServer

/// A location for the web view's tests: "Café Nord" (Europe/Oslo) with its daily, weekly and
/// monthly tournaments running; alice and bob are there and entered the daily one, alice scored
/// 420 in it; carol is there without entering; dave is registered and was never near anyone.
/// Everyone's password is `password-123`. Rounds are Statue, one per tournament entry.
struct WebScene {
    var location: Int
    var daily: Int
    var owner: String
    var tokens: [String: String]

    static let configure: @Sendable (inout LobbyConfiguration) -> Void = { $0.roundsPerGame = 1 }

    static func make(_ client: some TestClientProtocol, extraPlayers: [String] = []) async throws -> WebScene {
        var tokens: [String: String] = [:]
        for name in ["owner", "alice", "bob", "carol", "dave"] + extraPlayers { tokens[name] = try await client.player(name).token }
        let created = try await client.call(.post, "/v1/locations", token: tokens["owner"], json: #"{"name":"Café Nord","timeZone":"Europe/Oslo"}"#)
        let location = try #require(created.body["id"] as? Int, "\(created.body)")
        let tournaments = try #require(created.body["tournaments"] as? [[String: Any]])
        let daily = try #require(tournaments.first { $0["period"] as? String == "daily" }?["id"] as? Int)
        var scene = WebScene(location: location, daily: daily, owner: tokens["owner"]!, tokens: tokens)
        for name in ["alice", "bob", "carol"] { try await client.see(tokens[name]!, location: location, ownerToken: scene.owner) }
        for name in ["alice", "bob"] { try await scene.enter(name, client) }
        try await scene.score(420, by: "alice", client)
        scene.tokens = tokens
        return scene
    }

    /// `name` (present at the location) enters the daily tournament.
    func enter(_ name: String, _ client: some TestClientProtocol) async throws {
        let joined = try await client.call(.post, "/v1/tournaments/\(daily)/entries", token: tokens[name])
        #expect(joined.status == .created, "\(name) joining: \(joined.body)")
    }

    /// `name` plays its round of the daily tournament, verified, for `score` points.
    func score(_ score: Int, by name: String, _ client: some TestClientProtocol) async throws {
        let recording = try #require(SyntheticRecording.scoring(score, game: "statue", duration: 10, calibration: .init()))
        let json = String(decoding: try JSONEncoder().encode(recording), as: UTF8.self)
        let scored = try await client.call(.post, "/v1/tournaments/\(daily)/entries/me/rounds/1/scores", token: tokens[name],
                                           json: #"{"score":\#(score),"key":"web-\#(name)","recording":\#(json)}"#)
        #expect(scored.status == .created, "\(name) scoring: \(scored.body)")
    }
}
