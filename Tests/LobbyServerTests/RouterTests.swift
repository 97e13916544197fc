import BusTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import LobbyServer

/// Tier 1: the router without a socket.
@Suite struct RouterTests {
    @Test func healthAnswersOK() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let answer = try await client.call(.get, "/v1/health")
            #expect(answer.status == .ok)
            #expect(answer.body["status"] as? String == "ok")
        }
    }

    @Test func openAPIDocumentDescribesExactlyTheRoutedPaths() async throws {
        let server = try await TestServer()
        let routed = Set(buildLobbyRouter(store: server.store).routes.map { route in
            let path = route.path.description
                .replacingOccurrences(of: #":([A-Za-z]+)"#, with: "{$1}", options: .regularExpression)
            return "\(route.method.rawValue) \(path.hasPrefix("/") ? path : "/" + path)"
        })
        try await server.application.test(.router) { client in
            let yaml = try await client.execute(uri: "/v1/openapi.yaml", method: .get) { String(buffer: $0.body) }
            var documented = Set<String>()
            var path: String?
            for line in yaml.split(separator: "\n") {
                if line.hasPrefix("  /v1/") || line == "  /metrics:", line.hasSuffix(":") {
                    path = String(line.dropFirst(2).dropLast())
                } else if let current = path, let match = line.wholeMatch(of: #/    (get|post|put|patch|delete):/#) {
                    documented.insert("\(match.1.uppercased()) \(current)")
                } else if !line.hasPrefix(" ") {
                    path = nil
                }
            }
            #expect(documented.count >= 20)
            // The web view's pages are not the API: they are listed here, so a new one is seen
            // (WebViewTests and WebBrowserTests cover them).
            let web: Set = ["GET /", "GET /sign-in", "POST /sign-in", "POST /sign-out", "GET /players/{username}",
                            "GET /locations/{id}", "GET /locations/{id}/live", "GET /static/nearplay.css", "GET /static/screen.js"]
            let api = routed.filter { $0.contains(" /v1/") || $0.hasSuffix(" /metrics") }
            #expect(routed.subtracting(api) == web, "routes outside /v1 that are not the web view's: \(routed.subtracting(api).subtracting(web))")
            let routed = api
            #expect(routed.subtracting(documented).isEmpty, "routed but not documented: \(routed.subtracting(documented))")
            #expect(documented.subtracting(routed).isEmpty, "documented but not routed: \(documented.subtracting(routed))")
        }
    }

    /// Every `$ref` of the document names a component it defines, so the new routes' schemas are
    /// there, not only their paths.
    @Test func openAPIDocumentReferencesOnlyComponentsItDefines() throws {
        let yaml = OpenAPIDocument.text
        var defined = Set<String>()
        var section: String?
        for line in yaml.split(separator: "\n") {
            if let match = line.wholeMatch(of: #/  (schemas|parameters|requestBodies|responses|securitySchemes):/#) {
                section = String(match.1)
            } else if let section, let match = line.wholeMatch(of: #/    ([A-Za-z]+):.*/#) {
                defined.insert("#/components/\(section)/\(match.1)")
            }
        }
        let referenced = Set(yaml.matches(of: #/\$ref: "([^"]+)"/#).map { String($0.1) })
        #expect(referenced.count >= 15)
        #expect(referenced.isSuperset(of: ["#/components/schemas/Location", "#/components/schemas/Tournament",
                                            "#/components/schemas/TournamentEntry"]))
        #expect(referenced.subtracting(defined).isEmpty, "referenced but not defined: \(referenced.subtracting(defined))")
    }

    /// A strict validator (openapi-spec-validator, installed into the test venv by
    /// scripts/bootstrap) accepts the document the lobby serves: code generators refuse what it
    /// refuses (an unquoted comma in a flow-style description once split it into a stray key).
    @Test func aStrictValidatorAcceptsTheDocument() async throws {
        let validator = try testVenvProgram("openapi-spec-validator")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString).yaml")
        try OpenAPIDocument.text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await SpawnedProcess(validator, [file.path]).finish()
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("OK"), "\(run.stdout)\(run.stderr)")
    }

    @Test func badInputGetsA4xxJSONErrorNamingTheProblem() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
                (.post, "/v1/players", "{\"username\": ", .badRequest, "malformedJSON"),
                (.post, "/v1/players", #"{"username":1,"firstName":"a","lastName":"b","email":"x@y.z","password":"password-123"}"#, .badRequest, "wrongType"),
                (.post, "/v1/players", #"{"username":"abc"}"#, .badRequest, "missingField"),
                (.post, "/v1/invitations", #"{"invitees":"bob"}"#, .badRequest, "wrongType"),
                (.post, "/v1/invitations", #"{"invitees":[]}"#, .badRequest, "invalidField"),
                (.post, "/v1/encounters", #"{"sightings":[{"uuid":"nope","major":1,"minor":1,"at":"2026-01-01T00:00:00Z"}]}"#, .badRequest, "invalidValue"),
                (.post, "/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1,"at":"yesterday"}]}"#, .badRequest, "invalidValue"),
                // Dates Foundation's parser would roll over (found by schemathesis, seed 3).
                (.post, "/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1,"at":"2024-01-01T12:99:00Z"}]}"#, .badRequest, "invalidValue"),
                (.post, "/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1,"at":"2023-02-29T12:00:00Z"}]}"#, .badRequest, "invalidValue"),
                (.post, "/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1,"at":"2024-01-01T24:00:00+01:00"}]}"#, .badRequest, "invalidValue"),
                (.post, "/v1/games/999/rounds/1/scores", #"{"score":1,"key":"k","recording":\#(emptyRecordingJSON)}"#, .notFound, "gameNotFound"),
                (.post, "/v1/games/abc/rounds/1/scores", #"{"score":1,"key":"k","recording":\#(emptyRecordingJSON)}"#, .badRequest, "invalidField"),
                (.get, "/v1/games/b", nil, .badRequest, "invalidField"),
                (.get, "/v1/tournaments/-1", nil, .badRequest, "invalidField"),
                (.get, "/v1/events?limit=0", nil, .badRequest, "invalidField"),
                (.get, "/v1/events?limit=5000", nil, .badRequest, "invalidField"),
                (.get, "/v1/events?limit=ten", nil, .badRequest, "invalidField"),
                (.get, "/v1/events/live", nil, .upgradeRequired, "upgradeRequired"),
                (.post, "/v1/games/1/rounds/1/scores", #"{"score":-5,"key":"k","recording":\#(emptyRecordingJSON)}"#, .badRequest, "invalidField"),
                (.post, "/v1/games/1/rounds/1/scores", #"{"score":5,"key":"","recording":\#(emptyRecordingJSON)}"#, .badRequest, "invalidField"),
                (.post, "/v1/games/1/rounds/1/scores", #"{"score":5,"key":"k"}"#, .badRequest, "missingField"),
                (.post, "/v1/games/1/rounds/1/scores", #"{"score":5,"key":"k","recording":{"game":"statue","duration":10,"levels":[],"accelerations":[{"t":"soon","x":0,"y":0,"z":9}],"calibration":{}}}"#, .badRequest, "wrongType"),
                (.post, "/v1/invitations", #"{"invitees":["bob"],"key":""}"#, .badRequest, "invalidField"),
                (.post, "/v1/encounters", #"{"sightings":[],"key":7}"#, .badRequest, "wrongType"),
                (.put, "/v1/players/me/calibration", #"{"accelerometer":{"device":"d"}}"#, .badRequest, "missingField"),
                (.put, "/v1/players/me/calibration", #"{"accelerometer":{"device":"d","rest_ms2":[0,0,9.8],"gravity_ms2":9.8,"gravity_offset_ms2":0,"noise_ms2":3}}"#, .unprocessableContent, "calibrationRefused"),
                (.get, "/v1/players/me/calibration", nil, .notFound, "calibrationNotFound"),
                (.get, "/v1/players/me/radio-offsets", nil, .notFound, "radioOffsetsNotSolved"),
                (.put, "/v1/locations/4242/position", #"{"site":"hall","x":0,"y":0}"#, .notFound, "locationNotFound"),
                (.put, "/v1/locations/1/position", #"{"site":"hall","x":"east","y":0}"#, .badRequest, "wrongType"),
                (.put, "/v1/locations/1/position", #"{"x":0,"y":0}"#, .badRequest, "missingField"),
                (.delete, "/v1/locations/4242/position", nil, .notFound, "locationNotFound"),
                (.post, "/v1/locations/4242/hearings", #"{"hearings":[]}"#, .notFound, "locationNotFound"),
                (.post, "/v1/locations/1/hearings", #"{"hearings":{}}"#, .badRequest, "wrongType"),
                (.get, "/v1/games/424242", nil, .notFound, "gameNotFound"),
                (.post, "/v1/invitations/77/accept", nil, .notFound, "gameNotFound"),
                (.get, "/v1/players/nobody/stats", nil, .notFound, "playerNotFound"),
                (.get, "/v1/beacons/not-a-uuid/1/2", nil, .badRequest, "invalidField"),
                (.get, "/v1/events?after=-3", nil, .badRequest, "invalidField"),
                (.patch, "/v1/players/me", #"{"email":"new@example.org"}"#, .badRequest, "immutableField"),
                (.get, "/v1/no/such/route", nil, .notFound, "routeNotFound"),
                (.post, "/v1/health", nil, .methodNotAllowed, "methodNotAllowed"),
                (.delete, "/v1/games/1", nil, .methodNotAllowed, "methodNotAllowed"),
            ]
            for (method, uri, json, status, code) in cases {
                let answer = try await client.call(method, uri, token: alice.token, json: json)
                #expect(answer.status == status, "\(method) \(uri) \(json ?? "")")
                #expect(errorCode(answer.body) == code, "\(method) \(uri): \(answer.body)")
                let message = (answer.body["error"] as? [String: Any])?["message"] as? String
                #expect(message?.isEmpty == false)
            }

            // A number that does not fit its field is named with its path, not called invalid JSON
            // (Foundation on Linux reports it so, without a path).
            let unfitting: [(String, String, String)] = [
                ("/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":99999999999999999999,"minor":1,"at":"2026-01-01T00:00:00Z"}]}"#,
                 "sightings[0].major: 99999999999999999999 does not fit"),
                ("/v1/encounters", #"{"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2.5,"at":"2026-01-01T00:00:00Z"}]}"#,
                 "sightings[0].minor: 2.5 does not fit"),
                ("/v1/games/1/rounds/1/scores", #"{"score":99999999999999999999,"key":"k","recording":\#(emptyRecordingJSON)}"#,
                 "score: 99999999999999999999 does not fit"),
            ]
            for (uri, json, named) in unfitting {
                let answer = try await client.call(.post, uri, token: alice.token, json: json)
                #expect(answer.status == .badRequest, "\(json)")
                #expect(errorCode(answer.body) == "invalidValue", "\(json): \(answer.body)")
                let message = (answer.body["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(named), "\(json): \(message)")
            }
        }
    }

    @Test func oversizedBodiesAndNonImagePhotosAreRefused() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            let alice = try await client.player("alice")
            let huge = "{\"invitees\":[\"" + String(repeating: "a", count: 300 * 1024) + "\"]}"
            let tooBig = try await client.call(.post, "/v1/invitations", token: alice.token, json: huge)
            #expect(tooBig.status == .contentTooLarge)
            #expect(errorCode(tooBig.body) == "bodyTooLarge")
            let samples = String(repeating: #"{"t":1,"x":0,"y":0,"z":9.8},"#, count: 40_000)
            let hugeRecording = #"{"score":1,"key":"k","recording":{"game":"statue","duration":10,"levels":[],"calibration":{},"accelerations":["# + samples + #"{"t":2,"x":0,"y":0,"z":9.8}]}}"#
            let tooLong = try await client.call(.post, "/v1/games/1/rounds/1/scores", token: alice.token, json: hugeRecording)
            #expect(tooLong.status == .contentTooLarge)
            #expect(errorCode(tooLong.body) == "bodyTooLarge")
            let notImage = try await client.call(.put, "/v1/players/me/photo", token: alice.token, bytes: Array("<svg></svg>".utf8))
            #expect(notImage.status == .badRequest)
            #expect(errorCode(notImage.body) == "notAnImage")
            let bigPhoto = try await client.call(.put, "/v1/players/me/photo", token: alice.token, bytes: [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 512 * 1024))
            #expect(bigPhoto.status == .contentTooLarge)
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0]
            let ok = try await client.call(.put, "/v1/players/me/photo", token: alice.token, bytes: png)
            #expect(ok.status == .ok)
            let photo = try await client.execute(uri: "/v1/players/alice/photo", method: .get, headers: [.authorization: "Bearer \(alice.token)"]) { $0 }
            #expect(photo.headers[.contentType] == "image/png")
            #expect(Array(photo.body.readableBytesView) == png)
        }
    }
}

@Suite struct StrictDateTests {
    @Test func datesAreReadOnlyWhenEveryFieldIsInRange() throws {
        let valid = ["2026-01-31T12:00:00Z", "2024-02-29T23:59:59.125Z", "2026-06-01T08:30:00+02:00", "2026-06-01t08:30:00z"]
        for text in valid { #expect(JSONBody.date(text) != nil, "\(text)") }
        #expect(JSONBody.date("2026-06-01T08:30:00+02:00") == JSONBody.date("2026-06-01T06:30:00Z"))
        let invalid = ["2024-01-01T12:99:00Z", "2023-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
                       "2026-01-01T24:00:00Z", "2026-01-01T00:00:61Z", "2026-01-01T00:00:00+25:00", "2026-01-01T00:00:00", "yesterday"]
        for text in invalid { #expect(JSONBody.date(text) == nil, "\(text)") }
    }
}
