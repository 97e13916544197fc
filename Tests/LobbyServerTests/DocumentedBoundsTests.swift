import Foundation
import Hummingbird
import HummingbirdTesting
import Lobby
import Testing
@testable import LobbyServer

/// The bounds the OpenAPI document states are the ones the lobby enforces, so that schemathesis'
/// positive data (APIConformanceTests) is accepted: the time zone names, the times a sighting may
/// carry, password lengths as the document counts them, distinct site-profile distances.
@Suite struct DocumentedBoundsTests {
    /// The document's `TimeZoneName` enum, read from its lines (the generator never sees it).
    static func documentedTimeZoneNames() throws -> [String] {
        let lines = OpenAPIDocument.text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "    TimeZoneName:"), "the document has no TimeZoneName schema")
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("    # generator: skip-end") })
        let list = lines[start..<end].drop { !$0.contains("enum: [") }.joined(separator: "\n")
        return list.matches(of: #/"([^"]+)"/#).map { String($0.1) }
    }

    @Test func theDocumentListsTheTimeZoneNamesTheLobbyAccepts() throws {
        let documented = try Self.documentedTimeZoneNames()
        #expect(documented.count == Set(documented).count, "a name is listed twice")
        #expect(Set(documented) == TimeZoneNames.all,
                "only in the document: \(Set(documented).subtracting(TimeZoneNames.all).sorted()); only in TimeZoneNames: \(TimeZoneNames.all.subtracting(documented).sorted())")
        #expect(documented.contains("Europe/Oslo") && documented.contains("UTC") && documented.contains("Asia/Kolkata"))
        // This system's tz data knows every one, so none is refused here.
        let unknown = documented.filter { !TimeZoneNames.accepts($0) }
        #expect(unknown.isEmpty, "the system's tz data lacks \(unknown)")
        // Foundation takes these, the tz database has none of them.
        for name in ["GMT+5", "UTC+1", "GMT+05:00"] {
            #expect(TimeZone(identifier: name) != nil && !TimeZoneNames.accepts(name), "\(name)")
        }
    }

    /// A sighting's `at` is read when, and only when, the document's pattern for it matches
    /// (for dates whose fields are in range: `format: date-time` says that part).
    @Test func theSightingTimePatternIsWhatTheLobbyReads() throws {
        let line = try #require(OpenAPIDocument.text.split(separator: "\n").first { $0.contains("at: {type: string, format: date-time, pattern:") })
        let pattern = try #require(line.firstMatch(of: #/pattern: '([^']+)'/#)).1
        let regex = try NSRegularExpression(pattern: String(pattern))
        func matches(_ text: String) -> Bool { regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil }
        let samples = [
            "2026-01-31T12:00:00Z", "2026-01-31t12:00:00z", "2026-01-31T12:00:00.1Z", "2026-01-31T12:00:00.123456789+05:30",
            "2026-01-31T12:00:00+18:00", "2026-01-31T12:00:00-18:00", "2026-01-31T12:00:00+17:59", "0001-01-01T00:00:00+18:00",
            "9999-12-31T23:59:59-18:00", "2026-01-31T12:00:00+18:01", "2026-01-31T12:00:00-18:30", "2026-01-31T12:00:00+19:00",
            "2026-01-31T12:00:00-23:59", "2026-01-31T12:00:00.1234567890Z", "2026-01-31T12:00:00.Z", "2026-01-31T12:00:00",
            "2026-01-31 12:00:00Z", "2026-01-31T12:00:00+0100",
        ]
        for text in samples {
            #expect(matches(text) == (JSONBody.date(text) != nil), "\(text): the pattern \(matches(text) ? "matches" : "refuses") it, the lobby \(JSONBody.date(text) != nil ? "reads" : "refuses") it")
        }
        #expect(samples.filter(matches).count == 9)
    }

    /// Passwords and zones through the router: lengths counted as the document's minLength counts
    /// them (Unicode scalars), IANA names only.
    @Test func theRouterHoldsRequestsToTheDocumentedBounds() async throws {
        let server = try await TestServer()
        try await server.application.test(.router) { client in
            // Five letters with a combining accent each: 5 characters to the eye, 10 to the document.
            let accented = String(repeating: "e\u{301}", count: 5)
            let registered = try await client.call(.post, "/v1/players", json: """
                {"username":"accent","firstName":"A","lastName":"B","email":"accent@example.org","password":"\(accented)"}
                """)
            #expect(registered.status == .created, "\(registered.body)")
            let short = try await client.call(.post, "/v1/players", json: """
                {"username":"short","firstName":"A","lastName":"B","email":"short@example.org","password":"\(String(repeating: "e\u{301}", count: 4))e"}
                """)
            #expect(short.status == .badRequest && errorCode(short.body) == "invalidField", "\(short.body)")

            let alice = try await client.player("alice")
            // A key of one NUL once failed the database's length check (a 500); keys hold no NUL.
            for key in [#"\u0000"#, #"a\u0000b"#] {
                let report = try await client.call(.post, "/v1/encounters", token: alice.token, json: #"{"key":"\#(key)","sightings":[]}"#)
                #expect(report.status == .badRequest && errorCode(report.body) == "invalidField", "\(key): \(report.body)")
            }
            for zone in ["GMT+5", "UTC+1"] {
                let location = try await client.call(.post, "/v1/locations", token: alice.token, json: #"{"name":"Hall","timeZone":"\#(zone)"}"#)
                #expect(location.status == .badRequest && errorCode(location.body) == "invalidField", "\(zone): \(location.body)")
                let settings = try await client.call(.patch, "/v1/players/me", token: alice.token, json: #"{"timeZone":"\#(zone)"}"#)
                #expect(settings.status == .badRequest && errorCode(settings.body) == "invalidField", "\(zone): \(settings.body)")
            }
            let created = try await client.call(.post, "/v1/locations", token: alice.token, json: #"{"name":"Hall","timeZone":"Asia/Kolkata"}"#)
            #expect(created.status == .created && created.body["timeZone"] as? String == "Asia/Kolkata", "\(created.body)")
            let cleared = try await client.call(.patch, "/v1/players/me", token: alice.token, json: #"{"timeZone":""}"#)
            #expect(cleared.status == .ok, "\(cleared.body)")

            // Distances each once (uniqueItems): a distance given twice is refused even beside another.
            let id = try #require(created.body["id"] as? Int)
            let repeated = try await client.call(.put, "/v1/locations/\(id)/site-profile", token: alice.token,
                                                 json: #"{"exponent":2,"distances":[1,3,3],"readings":9}"#)
            #expect(repeated.status == .badRequest && errorCode(repeated.body) == "invalidField", "\(repeated.body)")
            let distinct = try await client.call(.put, "/v1/locations/\(id)/site-profile", token: alice.token,
                                                 json: #"{"exponent":2,"distances":[1,3,5],"readings":9}"#)
            #expect(distinct.status == .ok, "\(distinct.body)")
        }
    }
}
