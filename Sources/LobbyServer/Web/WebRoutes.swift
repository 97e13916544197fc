import Foundation
import HTTPTypes
import Hummingbird
import Lobby
import Logging
import NIOCore

/// The web view, served beside the API: a location's big screen (public, live), the player pages
/// (signed in with a cookie), sign-in and sign-out. Server-rendered HTML from the templates in
/// Web/Assets; the only script is the screen's live update. Every answer carries a
/// Content-Security-Policy that allows this lobby's own style, script and live stream, and nothing
/// else (no inline script, no other origin, no framing).
///
/// The screens' live streams come from `feeds`, which must run as a service beside the server.
func addWebRoutes(_ router: Router<LobbyRequestContext>, store: LobbyStore, throttle: SignInThrottle, metrics: LobbyMetrics,
                  feeds: ScreenFeeds) {
    let templates = feeds.templates
    let web = router.group().add(middleware: WebPageMiddleware(templates: templates))

    web.get("/") { request, _ in
        if let viewer = await signedIn(request, store: store) { return redirect("/players/\(pathSegment(viewer.username))") }
        return redirect("/sign-in")
    }
    // Pages name these with `?v=` and a hash of their bytes (WebTemplates), so a cached copy is
    // never paired with pages of another build.
    web.get("static/nearplay.css") { _, _ in asset(WebTemplates.stylesheet, type: "text/css; charset=utf-8") }
    web.get("static/screen.js") { _, _ in asset(WebTemplates.screenScript, type: "text/javascript; charset=utf-8") }

    web.get("sign-in") { request, context in
        if let viewer = await signedIn(request, store: store) { return redirect("/players/\(pathSegment(viewer.username))") }
        let formToken = request.cookies[WebSession.csrfCookie]?.value
        let csrf = formToken.flatMap { $0.count == 40 && $0.allSatisfy(\.isHexDigit) ? $0 : nil } ?? WebSession.newFormToken()
        let page = SignInPage(csrf: csrf, next: safeNext(request.uri.queryParameters.get("next")))
        var response = html(.ok, templates.render("sign-in", page))
        response.setCookie(WebSession.cookie(WebSession.csrfCookie, csrf, maxAge: 3600, secure: context.isSecure))
        return response
    }
    web.post("sign-in") { request, context in
        try refuseCrossSite(request)
        let form = try await FormBody(request)
        guard let sent = form["csrf"], let expected = request.cookies[WebSession.csrfCookie]?.value, WebSession.same(sent, expected) else {
            throw WebProblem(.forbidden, "Sign-in refused",
                             "This sign-in form has expired or was sent from another site: open the sign-in page again and sign in there.",
                             link: ("/sign-in", "Open the sign-in page"))
        }
        let username = form["username"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let next = safeNext(form["next"])
        var page = SignInPage(csrf: expected, next: next, username: username)
        guard !username.isEmpty, let password = form["password"], !password.isEmpty else {
            page.problem = "Enter your username and your password."
            return html(.badRequest, templates.render("sign-in", page))
        }
        if let wait = throttle.admit(.signIn(username: username), from: context.clientAddress) {
            metrics.throttled("webSignIn")
            page.problem = "Too many sign-in attempts: wait \(wait) s, then try again."
            var response = html(.tooManyRequests, templates.render("sign-in", page))
            response.headers[.retryAfter] = String(wait)
            return response
        }
        let session: SessionToken
        do {
            session = try await store.logIn(username: username, password: password)
        } catch let error as LobbyError where error.kind == .unauthenticated {
            page.problem = "That username and password do not match an account. Check them and try again."
            return html(.unauthorized, templates.render("sign-in", page))
        }
        throttle.signedIn(username)
        // Signing in again from a signed-in browser ends the session it had.
        if let previous = request.cookies[WebSession.sessionCookie]?.value, !previous.isEmpty {
            try? await store.logOut(token: previous)
        }
        var response = redirect(next.isEmpty ? "/players/\(pathSegment(username))" : next)
        let lifetime = max(60, Int(session.expiresAt.timeIntervalSinceNow))
        response.setCookie(WebSession.cookie(WebSession.sessionCookie, session.token, maxAge: lifetime, secure: context.isSecure))
        response.setCookie(WebSession.expired(WebSession.csrfCookie, secure: context.isSecure))
        return response
    }
    web.post("sign-out") { request, context in
        try refuseCrossSite(request)
        let form = try await FormBody(request)
        guard let viewer = await signedIn(request, store: store) else { return redirect("/sign-in") }
        guard let sent = form["csrf"], WebSession.same(sent, viewer.csrf) else {
            throw WebProblem(.forbidden, "Sign-out refused", "This form was not sent from your Nearplay page: sign out with the button at the top of it.",
                             link: ("/players/\(pathSegment(viewer.username))", "Your page"))
        }
        try await store.logOut(token: viewer.token)
        var response = redirect("/sign-in")
        response.setCookie(WebSession.expired(WebSession.sessionCookie, secure: context.isSecure))
        return response
    }

    web.get("players/:username") { request, context in
        let username = try context.parameters.require("username")
        guard let viewer = await signedIn(request, store: store) else {
            let next = "/players/\(pathSegment(username))"
            return redirect("/sign-in?next=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        }
        let statistics = try await store.statistics(viewer: viewer.id, username: username)
        guard statistics.username.lowercased() == viewer.username.lowercased() else {
            return html(.ok, templates.render("player", PlayerPage(viewer: viewer, statistics: statistics)), personal: true)
        }
        async let player = store.player(viewer.id)
        async let achievements = store.achievements(viewer.id)
        async let unlocked = store.unlocked(viewer.id)
        async let invitations = store.invitations(viewer.id)
        var boards: [(String, Leaderboard)] = []
        for (name, kind) in [("Today", BoardKind.day), ("This week", .week), ("This month", .month), ("All time", .allTime)] {
            boards.append((name, try await store.leaderboard(viewer: viewer.id, board: kind, limit: 1)))
        }
        let league = try await store.leaderboard(viewer: viewer.id, board: .league, limit: 1)
        let page = PlayerPage.own(
            viewer: viewer, player: try await player, statistics: statistics, boards: boards, league: league,
            achievements: try await achievements, unlocked: try await unlocked, invitations: try await invitations, now: Date())
        return html(.ok, templates.render("player", page), personal: true)
    }

    web.get("locations/:id") { request, context in
        let id = try locationId(context)
        let screen = try await store.locationScreen(id)
        let viewer = await signedIn(request, store: store)
        // Signed in, the page carries the viewer's name and sign-out token: not for caches.
        return html(.ok, templates.render("location", LocationPage(screen, viewer: viewer)), personal: viewer != nil)
    }
    web.get("locations/:id/live") { _, context in
        let id = try locationId(context)
        _ = try await store.locationScreen(id)
        return try feeds.response(location: id, address: context.clientAddress)
    }
}

/// The signed-in player of a browser request, from its session cookie; nil without one, or when
/// the session ended.
private func signedIn(_ request: Request, store: LobbyStore) async -> WebViewer? {
    guard let token = request.cookies[WebSession.sessionCookie]?.value, !token.isEmpty,
          let id = try? await store.authenticate(token: token),
          let player = try? await store.player(id) else { return nil }
    return WebViewer(id: id, username: player.username, token: token)
}

private func locationId(_ context: LobbyRequestContext) throws -> Int64 {
    let text = try context.parameters.require("id")
    guard let id = Int64(text), id > 0 else {
        throw WebProblem(.notFound, "No such location", "There is no location \(text.prefix(40)) here: ask the location's operator for its screen's address.")
    }
    return id
}

/// Where to go after signing in: a player page or a location screen of this site, nothing else
/// (browsers drop tabs and line breaks from addresses, so `/\t/evil.example` would leave the site).
func safeNext(_ next: String?) -> String {
    guard let next, next.utf8.count <= 100 else { return "" }
    let parts = next.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].isEmpty, !parts[2].isEmpty else { return "" }
    switch parts[1] {
    case "players" where parts[2].utf8.allSatisfy({ $0.isASCIIUsernameByte }): return next
    case "locations" where parts[2].utf8.allSatisfy({ (0x30...0x39).contains($0) }): return next
    default: return ""
    }
}

private extension UInt8 {
    /// A byte a username may have (letters, digits, `_`, `.`, `-`).
    var isASCIIUsernameByte: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || self == 0x5F || self == 0x2E || self == 0x2D
    }
}

/// Refuses a form another site's page sent: browsers say where a request comes from
/// (`Sec-Fetch-Site`, and `Origin` on a POST). Requests without either (old browsers, scripts)
/// still need the form's CSRF token.
private func refuseCrossSite(_ request: Request) throws {
    let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!]
    let origin = request.headers[HTTPField.Name("Origin")!]
    let host = request.head.authority
    let crossSite = site.map { $0 != "same-origin" && $0 != "none" } ?? false
    let foreignOrigin = origin.map { origin in
        origin == "null" || host.map { !(origin == "http://\($0)" || origin == "https://\($0)") } ?? false
    } ?? false
    if crossSite || foreignOrigin {
        throw WebProblem(.forbidden, "Form refused", "This form was sent from another site's page: open Nearplay's own page and use the form there.",
                         link: ("/", "Nearplay"))
    }
}

func pathSegment(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#"))) ?? text
}

func redirect(_ location: String) -> Response {
    Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
}

/// An HTML page; `personal` ones (a signed-in player's) are never stored by a cache.
func html(_ status: HTTPResponse.Status, _ text: String, personal: Bool = false) -> Response {
    Response(
        status: status,
        headers: [.contentType: "text/html; charset=utf-8", .cacheControl: personal ? "no-store" : "no-cache"],
        body: .init(byteBuffer: ByteBuffer(string: text)))
}

private func asset(_ bytes: [UInt8], type: String) -> Response {
    Response(status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=3600"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}

extension LobbyRequestContext {
    /// Whether the browser reached the lobby over TLS (a trusted proxy's `X-Forwarded-Proto`):
    /// then cookies are marked Secure.
    var isSecure: Bool { forwardedProto == "https" }
}

/// Renders the web routes' refusals as pages and sets the headers every page carries.
struct WebPageMiddleware: RouterMiddleware {
    typealias Context = LobbyRequestContext
    let templates: WebTemplates

    static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
        "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let problem as WebProblem {
            response = page(problem)
        } catch let error as LobbyError {
            var problem = WebProblem(APIError(error).status, Self.heading(APIError(error).status), error.message)
            problem.retryAfter = error.retryAfter
            response = page(problem)
        } catch let error as HTTPError {
            response = page(WebProblem(error.status, Self.heading(error.status), error.body ?? "Check the address and try again."))
        } catch {
            context.logger.error("Unexpected error on \(request.method) \(request.uri.path): \(error)")
            response = page(WebProblem(.internalServerError, "Something went wrong", "The lobby failed to answer; the error was logged. Try again in a moment."))
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        return response
    }

    private func page(_ problem: WebProblem) -> Response {
        let page = MessagePage(viewer: nil, heading: problem.heading, message: problem.message,
                               link: problem.link.map { MessagePage.Link(href: $0.href, text: $0.text) } ?? MessagePage.Link(href: "/", text: "Nearplay"))
        var response = html(problem.status, templates.render("message", page))
        if let wait = problem.retryAfter { response.headers[.retryAfter] = String(wait) }
        return response
    }

    private static func heading(_ status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "Not found"
        case .forbidden: "Not yours to see"
        case .unauthorized: "Sign in first"
        case .tooManyRequests: "Too many requests"
        case .badRequest: "Bad request"
        default: status.reasonPhrase
        }
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xAccelBuffering = Self("X-Accel-Buffering")!
}
