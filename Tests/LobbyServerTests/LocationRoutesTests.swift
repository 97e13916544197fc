import Foundation
import LobbyDatabase
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing
@testable import Lobby
@testable import LobbyServer

/// Locations and tournaments over HTTP (tier 1, the router without a socket), and the scheduler
/// that decides tournaments on time.
@Suite struct LocationRoutesTests {
    @Test func registerSeeJoinAndPlayOverHTTP() async throws {
        let server = try await TestServer { $0.roundsPerGame = 1 }
        try await server.application.test(.router) { client in
            let owner = try await client.player("owner")
            let alice = try await client.player("alice")
            let created = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"Hall","timeZone":"Europe/Oslo"}"#)
            #expect(created.status == .created, "\(created.body)")
            let id = try #require(created.body["id"] as? Int)
            let beacon = created.body["beacon"] as? [String: Any]
            #expect(beacon?["major"] as? Int == 0 && beacon?["minor"] as? Int == id)
            #expect(created.body["timeZone"] as? String == "Europe/Oslo")
            let reused = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"Hall"}"#)
            #expect(reused.status == .ok && reused.body["id"] as? Int == id)

            let listed = try await client.call(.get, "/v1/locations/\(id)/tournaments", token: alice.token)
            let tournaments = try #require(listed.raw as? [[String: Any]])
            #expect(Set(tournaments.compactMap { $0["period"] as? String }) == ["daily", "weekly", "monthly"])
            let daily = try #require(tournaments.first { $0["period"] as? String == "daily" }?["id"] as? Int)

            let refused = try await client.call(.post, "/v1/tournaments/\(daily)/entries", token: alice.token)
            #expect(refused.status == .forbidden && errorCode(refused.body) == "notNearLocation")
            try await client.see(alice.token, location: id, ownerToken: owner.token)
            let joined = try await client.call(.post, "/v1/tournaments/\(daily)/entries", token: alice.token)
            #expect(joined.status == .created, "\(joined.body)")
            #expect((joined.body["rounds"] as? [[String: Any]])?.first?["game"] as? String == "statue")
            let rejoined = try await client.call(.post, "/v1/tournaments/\(daily)/entries", token: alice.token)
            #expect(rejoined.status == .ok)

            let recording = try #require(SyntheticRecording.scoring(420, game: "statue", duration: 10, calibration: .init()))
            let json = String(decoding: try JSONEncoder().encode(recording), as: UTF8.self)
            let scored = try await client.call(.post, "/v1/tournaments/\(daily)/entries/me/rounds/1/scores", token: alice.token,
                                               json: #"{"score":420,"key":"k1","recording":\#(json)}"#)
            #expect(scored.status == .created && scored.body["total"] as? Int == 420, "\(scored.body)")
            let entry = try await client.call(.get, "/v1/tournaments/\(daily)/entries/me", token: alice.token)
            #expect(entry.status == .ok && entry.body["total"] as? Int == 420)
            let standings = try await client.call(.get, "/v1/tournaments/\(daily)", token: owner.token)
            let first = (standings.body["standings"] as? [[String: Any]])?.first
            #expect(first?["player"] as? String == "alice" && first?["rank"] as? Int == 1 && first?["total"] as? Int == 420)
            let location = try await client.call(.get, "/v1/locations/\(id)", token: alice.token)
            #expect(location.body["name"] as? String == "Hall" && location.body["owner"] as? String == "owner")
        }
    }

    /// The location's owner (its beacon) publishes the site profile; players read it with the
    /// location; nobody else may publish one, and a profile no site gives is refused.
    @Test func theOwnerPublishesTheSiteProfile() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let owner = try await client.player("owner")
            let alice = try await client.player("alice")
            let created = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"Hall"}"#)
            let id = try #require(created.body["id"] as? Int)
            #expect(created.body["siteProfile"] == nil)
            let profile = #"{"exponent":2.41,"distances":[1,3],"readings":180}"#
            let published = try await client.call(.put, "/v1/locations/\(id)/site-profile", token: owner.token, json: profile)
            #expect(published.status == .ok, "\(published.body)")
            let seen = try await client.call(.get, "/v1/locations/\(id)", token: alice.token)
            let site = try #require(seen.body["siteProfile"] as? [String: Any], "\(seen.body)")
            #expect(site["exponent"] as? Double == 2.41 && site["distances"] as? [Int] == [1, 3] && site["readings"] as? Int == 180)
            #expect(site["calibratedAt"] is String)

            let stranger = try await client.call(.put, "/v1/locations/\(id)/site-profile", token: alice.token, json: profile)
            #expect(stranger.status == .notFound && errorCode(stranger.body) == "locationNotFound")
            for bad in [#"{"exponent":0.5,"distances":[1,3],"readings":1}"#, #"{"exponent":2,"distances":[2,2],"readings":1}"#,
                        #"{"exponent":2,"distances":[1,3],"readings":0}"#, #"{"exponent":2,"distances":[1,-3],"readings":5}"#] {
                let refused = try await client.call(.put, "/v1/locations/\(id)/site-profile", token: owner.token, json: bad)
                #expect(refused.status == .badRequest && errorCode(refused.body) == "invalidField", "\(bad): \(refused.body)")
            }
            let unknown = try await client.call(.put, "/v1/locations/999/site-profile", token: owner.token, json: profile)
            #expect(unknown.status == .notFound)
        }
    }

    @Test func badLocationAndTournamentRequestsGet4xxErrorsNamingTheProblem() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
                (.post, "/v1/locations", "{}", .badRequest, "missingField"),
                (.post, "/v1/locations", #"{"name":""}"#, .badRequest, "invalidField"),
                // 40 letters with a combining accent each: 40 characters to the eye, 80 to the
                // document's maxLength and to the database (found by schemathesis as a 500).
                (.post, "/v1/locations", #"{"name":"\#(String(repeating: "E\u{0301}", count: 40))"}"#, .badRequest, "invalidField"),
                (.post, "/v1/locations", #"{"name":"Hall","timeZone":"Mars/Olympus"}"#, .badRequest, "invalidField"),
                (.get, "/v1/locations/abc", nil, .badRequest, "invalidField"),
                (.get, "/v1/locations/77", nil, .notFound, "locationNotFound"),
                (.get, "/v1/locations/77/tournaments", nil, .notFound, "locationNotFound"),
                (.get, "/v1/tournaments/77", nil, .notFound, "tournamentNotFound"),
                (.post, "/v1/tournaments/77/entries", nil, .notFound, "tournamentNotFound"),
                (.get, "/v1/tournaments/77/entries/me", nil, .notFound, "tournamentNotFound"),
                (.post, "/v1/tournaments/77/entries/me/rounds/1/scores", #"{"score":1,"key":"k","recording":\#(emptyRecordingJSON)}"#, .notFound, "tournamentNotFound"),
                (.post, "/v1/tournaments/1/entries/me/rounds/1/scores", #"{"score":1,"key":""}"#, .badRequest, "missingField"),
            ]
            for (method, uri, json, status, code) in cases {
                let answer = try await client.call(method, uri, token: alice.token, json: json)
                #expect(answer.status == status, "\(method) \(uri) \(json ?? "")")
                #expect(errorCode(answer.body) == code, "\(method) \(uri): \(answer.body)")
            }
            let anonymous = try await client.call(.get, "/v1/locations/1")
            #expect(anonymous.status == .unauthorized)
        }
    }

    /// The scheduler closes a tournament once its window is over, with nobody asking.
    @Test(.timeLimit(.minutes(5))) func theSchedulerDecidesATournamentOnTimeWithoutARequest() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scheduler-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualClock()
        let store = try LobbyStore(path: folder.appendingPathComponent("lobby.sqlite").path,
                                   configuration: LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4), clock: clock)
        let owner = try await store.register(Registration(username: "owner", firstName: "O", lastName: "W", email: "o@example.org", password: "password-123"))
        let ownerId = try await store.authenticate(token: try await store.logIn(username: owner.username, password: "password-123").token)
        let hall = try await store.registerLocation(ownerId, name: "Hall").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })

        let scheduler = PeriodicService.tournamentScheduler(store: store, logger: Logger(label: "test"), interval: .milliseconds(20))
        let group = ServiceGroup(configuration: .init(services: [scheduler], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        defer { running.cancel() }
        clock.advance(by: daily.endsAt.timeIntervalSince(clock.now()) + 1)
        var closed = false
        for _ in 0..<1500 where !closed {
            try await Task.sleep(for: .milliseconds(20))
            // Read straight from the database: the store's own reads settle due tournaments themselves.
            closed = try await isClosed(store, daily.id)
        }
        #expect(closed, "the daily tournament was not closed by the scheduler")
        await group.triggerGracefulShutdown()
        try await running.value
    }

    private func isClosed(_ store: LobbyStore, _ id: Int64) async throws -> Bool {
        try await store.database.read { db in
            try db.fetchValue(String.self, "SELECT state FROM tournament WHERE id = ?", id) == "closed"
        }
    }
}
