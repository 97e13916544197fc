import Foundation
import Hummingbird
import Lobby

/// Resolves `Authorization: Bearer <token>` to the player, or refuses the request with 401.
struct AuthenticationMiddleware: RouterMiddleware {
    let store: LobbyStore

    func handle(
        _ request: Request, context: LobbyRequestContext, next: (Request, LobbyRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let token = Self.bearerToken(request) else {
            throw APIError(.unauthorized, .missingToken, "Send the session token as `Authorization: Bearer <token>`; get one with POST /v1/sessions.")
        }
        var context = context
        context.playerId = try await store.authenticate(token: token)
        context.sessionToken = token
        return try await next(request, context)
    }

    /// The token of `Authorization: Bearer <token>`, without the spaces and tabs around it (an
    /// empty string when there is none, which no session has); nil
    /// when the header is missing or of another scheme. Every route that reads the token (logout,
    /// a password change) takes it from here, so they act on the session that was authenticated.
    static func bearerToken(_ request: Request) -> String? {
        bearerToken(header: request.headers[.authorization])
    }

    /// The token of an `Authorization` header's value, as ``bearerToken(_:)``.
    static func bearerToken(header: String?) -> String? {
        // The scheme is case-insensitive (RFC 9110, 11.1) and is followed by spaces or tabs.
        guard let header, header.utf8.count > 7,
              header.utf8.prefix(6).elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
              let separator = header.utf8.dropFirst(6).first, separator == 0x20 || separator == 0x09
        else { return nil }
        // trimmingCharacters would go through NSString, which costs more than the rest of this middleware.
        let token = header.utf8.dropFirst(7).drop { $0 == 0x20 || $0 == 0x09 }
        let end = token.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { token.index(after: $0) } ?? token.startIndex
        return String(Substring(token[..<end]))
    }
}
