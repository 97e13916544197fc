import Hummingbird
import HummingbirdWebSocket

/// The per-request context: Hummingbird's core storage, the WebSocket upgrade slot, and the
/// authenticated player once ``AuthenticationMiddleware`` has run.
public struct LobbyRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The authenticated player's id; nil on public routes.
    public var playerId: Int64?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
    }

    /// Request bodies are read by ``JSONBody`` with explicit limits; this is the outer bound.
    public var maxUploadSize: Int { 1024 * 1024 }

    /// The authenticated player, for routes behind the middleware.
    func player() throws -> Int64 {
        guard let playerId else { throw APIError(.unauthorized, "invalidToken", "This route needs a bearer token.") }
        return playerId
    }
}
