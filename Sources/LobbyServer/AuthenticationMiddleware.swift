import Foundation
import Hummingbird
import Lobby

/// Resolves `Authorization: Bearer <token>` to the player, or refuses the request with 401.
struct AuthenticationMiddleware: RouterMiddleware {
    let store: LobbyStore

    func handle(
        _ request: Request, context: LobbyRequestContext, next: (Request, LobbyRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw APIError(.unauthorized, "missingToken", "Send the session token as `Authorization: Bearer <token>`; get one with POST /v1/sessions.")
        }
        var context = context
        context.playerId = try await store.authenticate(token: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        return try await next(request, context)
    }
}
