import BeaconFrames
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The per-request context: Hummingbird's core storage, the WebSocket upgrade slot, and the
/// authenticated player once ``AuthenticationMiddleware`` has run.
public struct LobbyRequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's address (nil when the router is driven without a socket, as in tests).
    public let remoteAddress: SocketAddress?
    public let webSocket: WebSocketHandlerReference<Self>
    /// The authenticated player's id; nil on public routes.
    public var playerId: Int64?
    /// The bearer token the player was authenticated with; nil on public routes.
    var sessionToken: String?
    /// The client's address as a trusted reverse proxy forwarded it (``ForwardedClientMiddleware``).
    var forwardedClient: String?
    /// The scheme the client used, as a trusted reverse proxy forwarded it (`https` behind TLS).
    var forwardedProto: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address (without the port) as the sign-in throttle counts it: the peer's,
    /// or the one a trusted proxy forwarded.
    var clientAddress: String { forwardedClient ?? remoteAddress?.ipAddress ?? "local" }

    /// Request bodies are read by ``JSONBody`` with explicit limits; this is the outer bound.
    public var maxUploadSize: Int { 1024 * 1024 }

    /// The authenticated player, for routes behind the middleware.
    func player() throws -> Int64 {
        guard let playerId else { throw APIError(.unauthorized, .invalidToken, "This route needs a bearer token.") }
        return playerId
    }
}

extension LobbyRequestContext {
    /// The integer in the path segment `name` (a game id, a round number), or the API's own
    /// 400 `invalidField` naming it: never the web framework's message.
    func pathInteger<Value: FixedWidthInteger & Sendable>(_ name: String, as type: Value.Type = Int64.self) throws -> Value {
        let text = try parameters.require(name)
        guard let value = Value(text), value >= 0 else {
            throw APIError(.badRequest, .invalidField, "\(name): expected a non-negative whole number in the path, got \"\(text.prefix(40))\".")
        }
        return value
    }

    /// The beacon identity in the path segments `uuid`, `major` and `minor`, or 400
    /// `invalidField` naming the one that is not a UUID or not 0…65535.
    func beaconPath() throws -> BeaconIdentity {
        let text = try parameters.require("uuid")
        guard let uuid = UUID(uuidString: text) else {
            throw APIError(.badRequest, .invalidField, "uuid: \"\(text.prefix(40))\" is not a UUID.")
        }
        let major = try pathInteger("major", as: Int.self), minor = try pathInteger("minor", as: Int.self)
        guard let identity = BeaconIdentity(uuid: uuid, major: major, minor: minor) else {
            let (name, value) = major > 65535 ? ("major", major) : ("minor", minor)
            throw APIError(.badRequest, .invalidField, "\(name): must be 0…65535, got \(value).")
        }
        return identity
    }
}
