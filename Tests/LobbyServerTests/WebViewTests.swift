import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import Lobby
@testable import LobbyServer

/// The web view over the router (no browser): what each page shows and hides, sign-in and
/// sign-out, CSRF, the throttle, and the headers every page carries. WebBrowserTests drive the
/// same pages in a real browser.
@Suite struct WebViewTests {
    struct Page {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var text: String
        var setCookies: [String] { headers[values: .setCookie] }
        func cookie(_ name: String) -> String? {
            setCookies.first { $0.hasPrefix("\(name)=") }.map { String($0.dropFirst(name.count + 1).prefix { $0 != ";" }) }
        }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, cookies: [String: String] = [:]) async throws -> Page {
        var headers: HTTPFields = [:]
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        return try await client.execute(uri: uri, method: .get, headers: headers) { response in
            Page(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }

    static func post(_ client: some TestClientProtocol, _ uri: String, form: [(String, String)], cookies: [String: String] = [:],
                     headers extra: HTTPFields = [:]) async throws -> Page {
        var headers = extra
        headers[.contentType] = "application/x-www-form-urlencoded"
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            Page(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }

    /// Signs `username` in through the form; answers the session cookie's value.
    static func signIn(_ client: some TestClientProtocol, _ username: String, password: String = "password-123") async throws -> String {
        let form = try await get(client, "/sign-in")
        let csrf = try #require(form.cookie(WebSession.csrfCookie))
        #expect(form.text.contains(#"name="csrf" value="\#(csrf)""#))
        let answer = try await post(client, "/sign-in", form: [("csrf", csrf), ("username", username), ("password", password), ("next", "")],
                                    cookies: [WebSession.csrfCookie: csrf])
        #expect(answer.status == .seeOther, "\(answer.text.prefix(300))")
        return try #require(answer.cookie(WebSession.sessionCookie))
    }

    @Test func theLocationScreenShowsItsTournamentsBoardsAndPlayersButNothingPrivate() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            let scene = try await WebScene.make(client)
            let page = try await Self.get(client, "/locations/\(scene.location)")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains("<h1>Café Nord</h1>"))
            // alice played a round here and is named; bob (entered, not played yet) and carol
            // (not entered) are only counted, and two are "a few".
            #expect(page.text.contains(#"<ul id="present" class="names"><li>alice</li></ul>"#), "\(page.text)")
            #expect(page.text.contains("and a few more players not playing right now"))
            #expect(!page.text.contains("carol"))
            // The three tournaments, the daily one's board with alice first.
            for period in ["Daily", "Weekly", "Monthly"] { #expect(page.text.contains("\(period) tournament")) }
            #expect(page.text.contains(#"<tr data-player="alice"><td>1</td><th scope="row">alice</th><td class="num total">420</td>"#))
            #expect(page.text.contains(#"<tr data-player="bob"><td>2</td>"#))
            #expect(page.text.contains(#"<span class="who">alice</span> scored <strong>420</strong> in Statue <span class="when">(daily)</span>"#))
            // No names, e-mail addresses or beacon identities of anyone.
            for secret in ["@example.org", "E2C56DB5", "firstName", "major"] { #expect(!page.text.contains(secret), "\(secret) on the screen") }
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(page.headers[.xContentTypeOptions] == "nosniff")
            #expect(!page.text.contains("<script>") && !page.text.contains(" style="), "inline script or style the CSP would block")
        }
    }

    @Test func theScreenIsEscapedAndAnUnknownLocationIsAPage() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            let owner = try await client.player("owner")
            let created = try await client.call(.post, "/v1/locations", token: owner.token, json: #"{"name":"<b>Hall</b> & \"yard\""}"#)
            let id = try #require(created.body["id"] as? Int)
            let page = try await Self.get(client, "/locations/\(id)")
            #expect(page.text.contains("&lt;b&gt;Hall&lt;/b&gt; &amp; &quot;yard&quot;") && !page.text.contains("<b>Hall"))
            for path in ["/locations/999", "/locations/abc", "/locations/-1"] {
                let missing = try await Self.get(client, path)
                #expect(missing.status == .notFound, "\(path)")
                #expect(missing.headers[.contentType] == "text/html; charset=utf-8" && missing.text.contains(#"<p id="message">"#), "\(path): \(missing.text.prefix(200))")
            }
        }
    }

    @Test func signInSetsAStrictHttpOnlySessionCookieAndSignOutEndsTheSession() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            _ = try await client.player("alice")
            // Not signed in: the page sends the browser to sign in, and back afterwards.
            let away = try await Self.get(client, "/players/alice")
            #expect(away.status == .seeOther && away.headers[.location] == "/sign-in?next=%2Fplayers%2Falice")
            let form = try await Self.get(client, "/sign-in?next=/players/alice")
            let csrf = try #require(form.cookie(WebSession.csrfCookie))
            #expect(form.text.contains(#"name="next" value="/players/alice""#))
            let signedIn = try await Self.post(client, "/sign-in", form: [("csrf", csrf), ("username", "alice"), ("password", "password-123"), ("next", "/players/alice")],
                                               cookies: [WebSession.csrfCookie: csrf])
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/players/alice")
            let cookie = try #require(signedIn.setCookies.first { $0.hasPrefix("\(WebSession.sessionCookie)=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"), "\(cookie)")
            #expect(!cookie.contains("Secure"), "plain HTTP, no proxy saying TLS: \(cookie)")
            let session = try #require(signedIn.cookie(WebSession.sessionCookie))
            // The session is the API's: the token works as a bearer token too.
            #expect(try await client.call(.get, "/v1/players/me", token: session).status == .ok)

            let page = try await Self.get(client, "/players/alice", cookies: [WebSession.sessionCookie: session])
            #expect(page.status == .ok && page.headers[.cacheControl] == "no-store")
            for section in ["stats", "chart", "ranks", "league", "achievements", "contacts", "invitations"] {
                #expect(page.text.contains(#"id="\#(section)""#), "the own page has \(section)")
            }
            let token = WebSession.csrfToken(session: session)
            #expect(page.text.contains(#"<input type="hidden" name="csrf" value="\#(token)">"#))

            let out = try await Self.post(client, "/sign-out", form: [("csrf", token)], cookies: [WebSession.sessionCookie: session])
            #expect(out.status == .seeOther && out.headers[.location] == "/sign-in")
            #expect(out.setCookies.contains { $0.hasPrefix("\(WebSession.sessionCookie)=;") && $0.contains("Max-Age=0") })
            #expect(try await client.call(.get, "/v1/players/me", token: session).status == .unauthorized, "the session ended")
            #expect(try await Self.get(client, "/players/alice", cookies: [WebSession.sessionCookie: session]).status == .seeOther)
        }
    }

    @Test func formsWithoutTheirCSRFTokenAreRefused() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            _ = try await client.player("alice")
            // Sign-in: no token, a token without its cookie, a cookie without the token, two that differ.
            let form = try await Self.get(client, "/sign-in")
            let csrf = try #require(form.cookie(WebSession.csrfCookie))
            let attempts: [([(String, String)], [String: String])] = [
                ([("username", "alice"), ("password", "password-123")], [:]),
                ([("csrf", csrf), ("username", "alice"), ("password", "password-123")], [:]),
                ([("username", "alice"), ("password", "password-123")], [WebSession.csrfCookie: csrf]),
                ([("csrf", WebSession.newFormToken()), ("username", "alice"), ("password", "password-123")], [WebSession.csrfCookie: csrf]),
            ]
            for (fields, cookies) in attempts {
                let refused = try await Self.post(client, "/sign-in", form: fields, cookies: cookies)
                #expect(refused.status == .forbidden && refused.cookie(WebSession.sessionCookie) == nil, "\(fields) \(cookies)")
                #expect(refused.text.contains("another site"))
            }
            // Sign-out: without the session's token, or with another session's, the session stays.
            let session = try await Self.signIn(client, "alice")
            let other = try await Self.signIn(client, "alice")
            for fields in [[], [("csrf", "")], [("csrf", WebSession.csrfToken(session: other))]] {
                let refused = try await Self.post(client, "/sign-out", form: fields, cookies: [WebSession.sessionCookie: session])
                #expect(refused.status == .forbidden, "\(fields)")
            }
            #expect(try await client.call(.get, "/v1/players/me", token: session).status == .ok, "still signed in")
            // A form sent as something else is refused too.
            var headers: HTTPFields = [.contentType: "application/json", .cookie: "\(WebSession.sessionCookie)=\(session)"]
            let json = try await client.execute(uri: "/sign-out", method: .post, headers: headers, body: ByteBuffer(string: "{}")) { $0.status }
            #expect(json == .unsupportedMediaType)
            headers[.contentType] = "application/x-www-form-urlencoded"
            let huge = try await client.execute(uri: "/sign-out", method: .post, headers: headers,
                                                body: ByteBuffer(string: "csrf=" + String(repeating: "a", count: 10_000))) { $0.status }
            #expect(huge == .contentTooLarge)
        }
    }

    @Test func wrongPasswordsAreSaidAndThrottled() async throws {
        let server = try await TestServer(throttle: .init(accountBurst: 3, accountInterval: 600), WebScene.configure)
        try await server.application.test(.router) { client in
            _ = try await client.player("alice")
            let form = try await Self.get(client, "/sign-in")
            let csrf = try #require(form.cookie(WebSession.csrfCookie))
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<4 {
                let answer = try await Self.post(client, "/sign-in", form: [("csrf", csrf), ("username", "alice"), ("password", "wrong-one")],
                                                 cookies: [WebSession.csrfCookie: csrf])
                statuses.append(answer.status)
                #expect(answer.cookie(WebSession.sessionCookie) == nil)
                if answer.status == .unauthorized { #expect(answer.text.contains("do not match an account") && answer.text.contains(#"value="alice""#)) }
                if answer.status == .tooManyRequests { #expect(answer.text.contains("Too many sign-in attempts") && answer.headers[.retryAfter] != nil) }
            }
            #expect(statuses == [.unauthorized, .unauthorized, .unauthorized, .tooManyRequests])
        }
    }

    @Test func anotherPlayersPageShowsWhatTheAPILetsItSeeAndNoMore() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            let scene = try await WebScene.make(client)
            // dave never met alice: the API refuses her statistics to him, and so does the page.
            let dave = try await Self.signIn(client, "dave")
            let refused = try await Self.get(client, "/players/alice", cookies: [WebSession.sessionCookie: dave])
            let api = try await client.call(.get, "/v1/players/alice/stats", token: scene.tokens["dave"])
            #expect(refused.status == .forbidden && api.status == .forbidden)
            #expect(refused.text.contains(#"<p id="message">"#) && !refused.text.contains(#"id="stats""#))
            // bob sees alice once he reported her: her statistics, not her achievements, contacts or invitations.
            let alice = try await server.store.player(try await server.store.authenticate(token: scene.tokens["alice"]!))
            try await client.see(scene.tokens["bob"]!, (alice.beacon.iBeaconFields!.major, alice.beacon.iBeaconFields!.minor))
            let bob = try await Self.signIn(client, "bob")
            let page = try await Self.get(client, "/players/alice", cookies: [WebSession.sessionCookie: bob])
            #expect(page.status == .ok, "\(page.text.prefix(400))")
            #expect(page.text.contains("<h1>alice</h1>") && page.text.contains(#"id="stats""#) && page.text.contains(#"id="chart""#))
            for hidden in [#"id="achievements""#, #"id="contacts""#, #"id="invitations""#, "@example.org", #"class="subtitle""#] {
                #expect(!page.text.contains(hidden), "bob sees \(hidden) of alice")
            }
            #expect(try await Self.get(client, "/players/nobody-here", cookies: [WebSession.sessionCookie: bob]).status == .notFound)
        }
    }

    @Test func everyPageAndAssetCarriesItsHeadersAndThePageWeightIsSmall() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            let scene = try await WebScene.make(client)
            let session = try await Self.signIn(client, "alice")
            var weight = 0
            let screen = try await Self.get(client, "/locations/\(scene.location)")
            let style = try #require(screen.text.firstMatch(of: /href="(\/static\/nearplay\.css\?v=[0-9a-f]+)"/)?.1)
            let script = try #require(screen.text.firstMatch(of: /src="(\/static\/screen\.js\?v=[0-9a-f]+)"/)?.1)
            for (path, type) in [("/locations/\(scene.location)", "text/html"), (String(style), "text/css"), (String(script), "text/javascript")] {
                let page = try await Self.get(client, path)
                #expect(page.status == .ok && page.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                #expect(page.headers[.contentSecurityPolicy] == WebPageMiddleware.contentSecurityPolicy, "\(path)")
                weight += page.text.utf8.count
            }
            let own = try await Self.get(client, "/players/alice", cookies: [WebSession.sessionCookie: session])
            #expect(own.headers[.contentSecurityPolicy] == WebPageMiddleware.contentSecurityPolicy)
            #expect(weight < 100_000, "the screen, its style and script weigh \(weight) bytes")
            #expect(own.text.utf8.count < 100_000)
            // The root sends a browser to sign in, or to its page.
            #expect(try await Self.get(client, "/").headers[.location] == "/sign-in")
            #expect(try await Self.get(client, "/", cookies: [WebSession.sessionCookie: session]).headers[.location] == "/players/alice")
            #expect(try await Self.get(client, "/sign-in", cookies: [WebSession.sessionCookie: session]).headers[.location] == "/players/alice")
        }
    }

    @Test func behindATLSProxyTheCookiesAreSecure() async throws {
        let server = try await TestServer(connections: { var limits = ConnectionLimits(); limits.trustedProxies = ["127.0.0.1"]; return limits }(),
                                          WebScene.configure)
        try await server.application.test(.live) { client in
            _ = try await client.player("alice")
            var https = HTTPFields()
            https.append(.init(name: .init("X-Forwarded-Proto")!, value: "https"))
            https.append(.init(name: .init("X-Forwarded-For")!, value: "10.0.0.5"))
            let form = try await client.execute(uri: "/sign-in", method: .get, headers: https) { $0.headers[values: .setCookie] }
            #expect(form.allSatisfy { $0.contains("Secure") } && !form.isEmpty, "\(form)")
            let csrf = try #require(form.first.map { String($0.dropFirst(WebSession.csrfCookie.count + 1).prefix { $0 != ";" }) })
            var headers = https
            headers[.contentType] = "application/x-www-form-urlencoded"
            headers[.cookie] = "\(WebSession.csrfCookie)=\(csrf)"
            let cookies = try await client.execute(uri: "/sign-in", method: .post, headers: headers,
                                                   body: ByteBuffer(string: "csrf=\(csrf)&username=alice&password=password-123")) { $0.headers[values: .setCookie] }
            let session = try #require(cookies.first { $0.hasPrefix(WebSession.sessionCookie) })
            #expect(session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Strict"), "\(session)")
        }
    }

    @Test func afterSigningInOnlyThisSitesPagesAreGoneTo() {
        for good in ["/players/alice", "/players/a.b-c_d", "/locations/12"] { #expect(safeNext(good) == good) }
        for bad in ["//evil.example", "/\t/evil.example", "/\\evil.example", "https://evil.example", "/players/../../x",
                    "/players/alice/extra", "/locations/1x", "/players/", "/players/al ice", "/other/alice", "", "/"] {
            #expect(safeNext(bad) == "", "\(bad.debugDescription)")
        }
    }

    @Test func formsSentFromAnotherSitesPageAreRefused() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.router) { client in
            _ = try await client.player("alice")
            let form = try await Self.get(client, "/sign-in")
            let csrf = try #require(form.cookie(WebSession.csrfCookie))
            let fields = [("csrf", csrf), ("username", "alice"), ("password", "password-123")]
            for (name, value) in [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site"), ("Origin", "https://evil.example"), ("Origin", "null")] {
                var headers = HTTPFields()
                headers.append(.init(name: .init(name)!, value: value))
                let refused = try await Self.post(client, "/sign-in", form: fields, cookies: [WebSession.csrfCookie: csrf], headers: headers)
                #expect(refused.status == .forbidden && refused.cookie(WebSession.sessionCookie) == nil, "\(name): \(value)")
            }
            var same = HTTPFields()
            same.append(.init(name: .init("Sec-Fetch-Site")!, value: "same-origin"))
            let accepted = try await Self.post(client, "/sign-in", form: fields, cookies: [WebSession.csrfCookie: csrf], headers: same)
            #expect(accepted.status == .seeOther && accepted.cookie(WebSession.sessionCookie) != nil)
            // Signing in again from that browser ends the session it had.
            let first = try #require(accepted.cookie(WebSession.sessionCookie))
            let again = try await Self.post(client, "/sign-in", form: fields,
                                            cookies: [WebSession.csrfCookie: csrf, WebSession.sessionCookie: first])
            #expect(again.status == .seeOther)
            #expect(try await client.call(.get, "/v1/players/me", token: first).status == .unauthorized)
        }
    }

    @Test(.timeLimit(.minutes(3))) func theLiveStreamSendsChangesAndHoldsEachAddressToFourStreams() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let scene = try await WebScene.make(client)
            func open() async throws -> RawConnection {
                let connection = try await RawConnection(port: port)
                try await connection.send("GET /locations/\(scene.location)/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                return connection
            }
            func waitFor(_ connection: RawConnection, _ text: String) async -> Bool {
                for _ in 0..<250 {
                    if connection.received.contains(text) { return true }
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return false
            }
            var streams: [RawConnection] = []
            for _ in 0..<4 {
                let stream = try await open()
                #expect(await waitFor(stream, "event: screen\ndata: <section class=\"present\""), "\(stream.received.prefix(300))")
                #expect(stream.received.contains("text/event-stream") && stream.received.contains("retry: 2000"))
                streams.append(stream)
            }
            let fifth = try await open()
            #expect(await waitFor(fifth, "HTTP/1.1 429"), "\(fifth.received.prefix(200))")
            await fifth.close()
            // A score reaches every stream, as one more event.
            try await scene.enter("carol")
            try await scene.score(987, by: "carol")
            for stream in streams {
                #expect(await waitFor(stream, #"<td class="num total">987</td>"#), "the new score on every stream")
            }
            // (A stream whose client left is given back when a write to it fails: at a change or
            // a keep-alive after the kernel has seen the close, which can take two writes, up to
            // 30 s; not waited for here.)
            for stream in streams { await stream.close() }
        }
    }
}
