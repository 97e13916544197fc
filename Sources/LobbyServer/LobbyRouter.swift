import Foundation
import Hummingbird
import HummingbirdWebSocket
import Lobby

/// Builds the `/v1` API over a store. Public routes: health, the OpenAPI document, registration
/// and log-in; everything else is behind ``AuthenticationMiddleware`` and acts only as the
/// authenticated player. Registration and log-in pass `throttle` before any bcrypt work.
///
/// `GET /metrics` (outside `/v1`, where Prometheus looks by default) answers `metrics` in the
/// Prometheus text format, without a token: counts and times only, no player's data.
///
/// Behind reverse proxies at `trustedProxies`, the client address is the one they forward.
///
/// The location screens' live streams are read by a service of their own, which only
/// `buildLobbyApplication` runs: on this router alone they wait.
public func buildLobbyRouter(
    store: LobbyStore, throttle: SignInThrottle = SignInThrottle(), metrics: LobbyMetrics = LobbyMetrics(),
    trustedProxies: Set<String> = []
) -> Router<LobbyRequestContext> {
    buildLobbyRouter(store: store, throttle: throttle, metrics: metrics, trustedProxies: trustedProxies,
                     screenFeeds: ScreenFeeds(store: store, templates: WebTemplates()))
}

/// The router, its screens' live streams read by `screenFeeds` (run it as a service beside the server).
func buildLobbyRouter(
    store: LobbyStore, throttle: SignInThrottle, metrics: LobbyMetrics, trustedProxies: Set<String>, screenFeeds: ScreenFeeds
) -> Router<LobbyRequestContext> {
    let router = Router(context: LobbyRequestContext.self)
    if !trustedProxies.isEmpty { router.add(middleware: ForwardedClientMiddleware(trustedProxies: trustedProxies)) }
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    router.get("metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(webSocketClients: store.events.subscriberCount, pool: store.databasePool))))
    }
    let v1 = router.group("v1")
    v1.get("health") { _, _ in
        _ = try await store.expireInvitations()
        return try JSONBody.response(.ok, Health(status: "ok"))
    }
    v1.get("openapi.yaml") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.text)))
    }
    v1.post("players") { request, context in
        let registration = try await JSONBody.decode(Registration.self, from: request)
        if let wait = throttle.admit(.registration(username: registration.username), from: context.clientAddress) {
            metrics.throttled("registration")
            throw APIError.throttled(retryAfter: wait)
        }
        return try JSONBody.response(.created, try await store.register(registration))
    }
    v1.post("sessions") { request, context in
        let body = try await JSONBody.decode(LogInRequest.self, from: request)
        if let wait = throttle.admit(.signIn(username: body.username), from: context.clientAddress) {
            metrics.throttled("signIn")
            throw APIError.throttled(retryAfter: wait)
        }
        let session = try await store.logIn(username: body.username, password: body.password)
        throttle.signedIn(body.username)
        return try JSONBody.response(.created, session)
    }

    let authenticated = v1.group().add(middleware: AuthenticationMiddleware(store: store))
    addPlayerRoutes(authenticated, store: store, throttle: throttle, metrics: metrics)
    addPlayRoutes(authenticated, store: store)
    addEventRoutes(authenticated, store: store)
    addLocationRoutes(authenticated, store: store)
    addStatisticsRoutes(authenticated, store: store)
    addWebRoutes(router, store: store, throttle: throttle, metrics: metrics, feeds: screenFeeds)
    return router
}

func noContent() -> Response { Response(status: .noContent) }
