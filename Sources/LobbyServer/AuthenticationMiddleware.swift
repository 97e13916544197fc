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
        // Spaces and tabs around the token are dropped (trimmingCharacters would go through NSString,
        // which costs more than the rest of this middleware).
        let token = header.utf8.dropFirst(7).drop { $0 == 0x20 || $0 == 0x09 }
        let end = token.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { token.index(after: $0) } ?? token.startIndex
        context.playerId = try await store.authenticate(token: String(Substring(token[..<end])))
        return try await next(request, context)
    }
}
