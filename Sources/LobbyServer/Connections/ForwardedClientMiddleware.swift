import HTTPTypes
import Hummingbird
import NIOCore

/// Behind reverse proxies (nginx in front of several lobby instances) every request comes from a
/// proxy's address, so the sign-in throttle would count all clients as one. For a request whose
/// peer is a trusted proxy, this reads the client from `X-Forwarded-For`: the addresses there, read
/// from the right, were appended by the proxies the request passed; the first one that is not a
/// trusted proxy is the client. Entries further left were written by the client itself and are
/// never believed. A request from anyone else keeps its peer address, whatever header it sends.
struct ForwardedClientMiddleware: RouterMiddleware {
    typealias Context = LobbyRequestContext
    let trustedProxies: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let peer = context.remoteAddress?.ipAddress, trustedProxies.contains(peer) else {
            return try await next(request, context)
        }
        var context = context
        let fields = request.headers.filter { $0.name.canonicalName == "x-forwarded-for" }.map(\.value)
        context.forwardedClient = Self.client(forwardedFor: fields, trustedProxies: trustedProxies)
        context.forwardedProto = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased()
        return try await next(request, context)
    }

    /// The client in `X-Forwarded-For` field values (several fields count as one list), or nil
    /// when there is none or the entry is not an IP address.
    static func client(forwardedFor fields: [String], trustedProxies: Set<String>) -> String? {
        let hops = fields.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let address = try? SocketAddress(ipAddress: hop, port: 0), let text = address.ipAddress else { return nil }
            if !trustedProxies.contains(text) { return text }
        }
        return nil
    }
}
