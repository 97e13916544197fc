import Foundation
import Hummingbird
import HummingbirdWebSocket
import Lobby

/// Builds the `/v1` API over a store. Public routes: health, the OpenAPI document, registration
/// and log-in; everything else is behind ``AuthenticationMiddleware`` and acts only as the
/// authenticated player.
public func buildLobbyRouter(store: LobbyStore) -> Router<LobbyRequestContext> {
    let router = Router(context: LobbyRequestContext.self)
    router.add(middleware: ErrorMiddleware())
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
    v1.post("players") { request, _ in
        let registration = try await JSONBody.decode(Registration.self, from: request)
        return try JSONBody.response(.created, try await store.register(registration))
    }
    v1.post("sessions") { request, _ in
        let body = try await JSONBody.decode(LogInRequest.self, from: request)
        return try JSONBody.response(.created, try await store.logIn(username: body.username, password: body.password))
    }

    let authenticated = v1.group().add(middleware: AuthenticationMiddleware(store: store))
    addPlayerRoutes(authenticated, store: store)
    addPlayRoutes(authenticated, store: store)
    addEventRoutes(authenticated, store: store)
    addLocationRoutes(authenticated, store: store)
    addStatisticsRoutes(authenticated, store: store)
    return router
}

func noContent() -> Response { Response(status: .noContent) }
