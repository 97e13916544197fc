import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import Lobby
@testable import LobbyServer

/// Every authenticated route, called by mallory with the ids and names of other players' things
/// (invitations, games, tournaments, locations, profiles). Ids are sequential integers, so nothing
/// but these checks keeps a player out of another's data.
@Suite struct AuthorisationMatrixTests {
    @Test func everyRouteWithAnotherPlayersIdsRefusesOrShowsOnlyWhatAnyPlayerMaySee() async throws {
        let server = try await TestServer { $0.roundsPerGame = 1 }
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            let bob = try await client.player("bob")
            let mallory = try await client.player("mallory")
            let carol = try await client.player("carol")
            try await client.see(alice.token, (bob.major, bob.minor))
            try await client.see(alice.token, (carol.major, carol.minor))
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0]
            #expect(try await client.call(.put, "/v1/players/me/photo", token: alice.token, bytes: png).status == .ok)
            let played = try await client.call(.post, "/v1/invitations", token: alice.token, json: #"{"invitees":["bob"]}"#)
            let game = try #require(played.body["id"] as? Int)
            #expect(try await client.call(.post, "/v1/invitations/\(game)/accept", token: bob.token).status == .ok)
            let pending = try await client.call(.post, "/v1/invitations", token: alice.token, json: #"{"invitees":["carol"]}"#)
            let invitation = try #require(pending.body["id"] as? Int)
            let hall = try await client.call(.post, "/v1/locations", token: alice.token, json: #"{"name":"Hall"}"#)
            let location = try #require(hall.body["id"] as? Int)
            let listed = try await client.call(.get, "/v1/locations/\(location)/tournaments", token: bob.token)
            let tournament = try #require((listed.raw as? [[String: Any]])?.first?["id"] as? Int)
            try await client.see(bob.token, location: location, ownerToken: alice.token)
            #expect(try await client.call(.post, "/v1/tournaments/\(tournament)/entries", token: bob.token).status == .created)
            let score = #"{"score":1,"key":"m","recording":\#(emptyRecordingJSON)}"#

            /// (method, path, expected status); the path names alice's or bob's things.
            let matrix: [(HTTPRequest.Method, String, String?, HTTPResponse.Status)] = [
                // Other players' invitations and games answer as ids that do not exist (issue 21, point 8).
                (.post, "/v1/invitations/\(invitation)/accept", nil, .notFound),
                (.post, "/v1/invitations/\(invitation)/decline", nil, .notFound),
                (.get, "/v1/games/\(game)", nil, .notFound),
                (.post, "/v1/games/\(game)/rounds/1/scores", score, .notFound),
                (.post, "/v1/games/\(game)/rounds/1/signal", nil, .notFound),
                (.get, "/v1/players/alice/stats", nil, .forbidden),
                (.post, "/v1/tournaments/\(tournament)/entries", nil, .forbidden),
                (.get, "/v1/tournaments/\(tournament)/entries/me", nil, .notFound),
                (.post, "/v1/tournaments/\(tournament)/entries/me/rounds/1/scores", score, .forbidden),
                (.post, "/v1/tournaments/\(tournament)/entries/me/rounds/1/signal", nil, .forbidden),
                (.put, "/v1/locations/\(location)/site-profile", #"{"exponent":2,"distances":[1,3],"readings":9}"#, .notFound),
                (.put, "/v1/locations/\(location)/on-air", nil, .notFound),
                (.put, "/v1/locations/\(location)/position", #"{"site":"Hall","x":1,"y":1}"#, .notFound),
                (.delete, "/v1/locations/\(location)/position", nil, .notFound),
                (.post, "/v1/locations/\(location)/hearings", #"{"hearings":[]}"#, .notFound),
                // A location's rotating-identity key is its owner's alone (issue 22); one's own is one's own.
                (.get, "/v1/locations/\(location)/beacon-key", nil, .notFound),
                (.get, "/v1/players/me/beacon-key", nil, .ok),
                // An identity no location advertises now.
                (.get, "/v1/locations/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/\(location)", nil, .notFound),
                // A face only for players who met its owner (issue 21): mallory never did.
                (.get, "/v1/players/alice/photo", nil, .notFound),
                // Inviting someone mallory has not met: refused, naming why.
                (.post, "/v1/invitations", #"{"invitees":["alice"]}"#, .conflict),
                (.post, "/v1/locations", #"{"name":"Hall"}"#, .conflict),
                // What any player may see of others: a public profile (of a player on the air), a
                // location and its tournaments (nothing private, checked below).
                (.get, "/v1/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/\(alice.major)/\(alice.minor)", nil, .ok),
                (.get, "/v1/locations/\(location)", nil, .ok),
                (.get, "/v1/locations/\(location)/tournaments", nil, .ok),
                (.get, "/v1/tournaments/\(tournament)", nil, .ok),
                (.get, "/v1/leaderboards/tournament:\(tournament)", nil, .ok),
                // Routes without ids act on mallory only (checked below).
                (.get, "/v1/invitations", nil, .ok),
                (.get, "/v1/games", nil, .ok),
                (.get, "/v1/events?after=0", nil, .ok),
                (.get, "/v1/unlocked", nil, .ok),
                (.get, "/v1/achievements", nil, .ok),
                (.get, "/v1/players/me", nil, .ok),
                (.patch, "/v1/players/me", #"{"firstName":"M"}"#, .ok),
                (.get, "/v1/players/me/calibration", nil, .notFound),
                // Only one's own radio offsets, and mallory has none solved.
                (.get, "/v1/players/me/radio-offsets", nil, .notFound),
                (.put, "/v1/players/me/calibration", #"{}"#, .ok),
                (.post, "/v1/encounters", #"{"sightings":[]}"#, .ok),
                (.post, "/v1/blocks/alice", nil, .noContent),
                (.delete, "/v1/blocks/alice", nil, .noContent),
                (.put, "/v1/players/me/photo", nil, .badRequest),
                (.get, "/v1/events/live", nil, .upgradeRequired),
            ]
            var answers: [String: (status: HTTPResponse.Status, body: [String: Any], raw: Any?)] = [:]
            for (method, path, json, expected) in matrix {
                let answer = try await client.call(method, path, token: mallory.token, json: json, bytes: method == .put && json == nil ? [1, 2, 3] : nil)
                #expect(answer.status == expected, "\(method) \(path): \(answer.body)")
                answers["\(method) \(path)"] = answer
            }

            // Nothing private of alice's or bob's in what mallory saw.
            let seen = answers.values.compactMap { $0.raw }.map { String(describing: $0) }.joined()
            #expect(!seen.contains("alice@example.org") && !seen.contains("bob@example.org"))
            #expect((answers["GET /v1/invitations"]?.raw as? [Any])?.isEmpty == true)
            #expect((answers["GET /v1/games"]?.raw as? [Any])?.isEmpty == true)
            #expect((answers["GET /v1/events?after=0"]?.body["events"] as? [Any])?.isEmpty == true)
            #expect(answers["GET /v1/players/me"]?.body["username"] as? String == "mallory")
            #expect(errorCode(answers["POST /v1/invitations"]?.body ?? [:]) == "nobodyInvitable")
            // And nothing of theirs changed: carol's invitation is still open, bob's entry unscored.
            let carolsInvitations = try await client.call(.get, "/v1/invitations", token: carol.token)
            #expect((carolsInvitations.raw as? [[String: Any]])?.contains { $0["id"] as? Int == invitation && $0["state"] as? String == "pending" } == true,
                    "\(carolsInvitations.raw ?? "")")
            let entry = try await client.call(.get, "/v1/tournaments/\(tournament)/entries/me", token: bob.token)
            #expect(entry.status == .ok && entry.body["total"] as? Int == 0, "\(entry.body)")
            #expect(try await client.call(.get, "/v1/players/me", token: alice.token).body["firstName"] as? String == "F")

            // Logging out and deleting the account end mallory's, not anyone else's.
            #expect(try await client.call(.delete, "/v1/sessions/current", token: mallory.token).status == .noContent)
            let again = try await client.call(.post, "/v1/sessions", json: #"{"username":"mallory","password":"password-123"}"#)
            let token = try #require(again.body["token"] as? String)
            #expect(try await client.call(.delete, "/v1/players/me", token: token).status == .noContent)
            #expect(try await client.call(.get, "/v1/players/me", token: alice.token).status == .ok)
            #expect(try await client.call(.get, "/v1/games/\(game)", token: bob.token).status == .ok)

            // The matrix names every authenticated route the router has (a new route must join it).
            let covered = Set(matrix.map { "\($0.0.rawValue) \(Self.pattern($0.1))" } + ["DELETE /v1/sessions/current", "DELETE /v1/players/me"])
            let routed = Set(buildLobbyRouter(store: server.store).routes.map { "\($0.method.rawValue) \(Self.pattern("/" + $0.path.description))" })
            let open: Set = ["GET /v1/health", "GET /v1/openapi.yaml", "POST /v1/players", "POST /v1/sessions", "GET /metrics"]
            // The web view's pages take a session cookie, not a bearer token: WebViewTests holds
            // them to the same rule (anotherPlayersPageShowsWhatTheAPILetsItSeeAndNoMore; the
            // location screen shows no player's private data to anyone).
            let web: Set = ["GET /", "GET /sign-in", "POST /sign-in", "POST /sign-out", "GET /players/*",
                            "GET /locations/*", "GET /locations/*/live", "GET /static/nearplay.css", "GET /static/screen.js"]
            #expect(routed.subtracting(open).subtracting(web).subtracting(covered).isEmpty,
                    "not in the matrix: \(routed.subtracting(open).subtracting(web).subtracting(covered))")
        }
    }

    /// A path with its ids, names and query replaced by placeholders, as the router spells its routes.
    static func pattern(_ path: String) -> String {
        let bare = path.split(separator: "?").first.map(String.init) ?? path
        return bare.split(separator: "/", omittingEmptySubsequences: false).enumerated().map { index, part in
            let previous = index > 0 ? bare.split(separator: "/", omittingEmptySubsequences: false)[index - 1] : ""
            if part.hasPrefix(":") || part.hasPrefix("{") || Int(part) != nil || UUID(uuidString: String(part)) != nil { return "*" }
            if ["players", "blocks", "leaderboards"].contains(previous) && !["me"].contains(part) { return "*" }
            return String(part)
        }.joined(separator: "/").replacingOccurrences(of: "//", with: "/")
    }
}
