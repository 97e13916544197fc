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
func addWebRoutes(_ router: Router<LobbyRequestContext>, store: LobbyStore, throttle: SignInThrottle, metrics: LobbyMetrics) {
    let templates = WebTemplates()
    let web = router.group().add(middleware: WebPageMiddleware(templates: templates))

    web.get("/") { request, _ in
        if let viewer = await signedIn(request, store: store) { return redirect("/players/\(pathSegment(viewer.username))") }
        return redirect("/sign-in")
    }
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
        var response = redirect(next.isEmpty ? "/players/\(pathSegment(username))" : next)
        let lifetime = max(60, Int(session.expiresAt.timeIntervalSinceNow))
        response.setCookie(WebSession.cookie(WebSession.sessionCookie, session.token, maxAge: lifetime, secure: context.isSecure))
        response.setCookie(WebSession.expired(WebSession.csrfCookie, secure: context.isSecure))
        return response
    }
    web.post("sign-out") { request, context in
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
        return html(.ok, templates.render("location", LocationPage(screen, viewer: await signedIn(request, store: store))))
    }
    web.get("locations/:id/live") { _, context in
        let id = try locationId(context)
        let first = try await store.locationScreen(id)
        return ScreenStream(store: store, templates: templates, location: id, first: first).response()
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

/// Where to go after signing in: a path of this site only (never `//other.example`).
private func safeNext(_ next: String?) -> String {
    guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"), next.count <= 200 else { return "" }
    return next
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
