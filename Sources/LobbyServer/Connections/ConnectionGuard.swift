import Foundation
import Hummingbird
import Lobby
import Logging
import NIOCore
import SystemSupport

/// The first handler of every lobby connection, on raw bytes: counts the connection against its
/// address's share, gives the first request head ``ConnectionLimits/headTimeout`` to arrive (and
/// ``ConnectionLimits/maximumHeadBytes`` to fit in), and closes the connection
/// ``ConnectionLimits/drainTimeout`` after the server starts shutting down.
///
/// Later requests are timed by ``RequestWatch`` (bodies) and Hummingbird's idle timeout (heads);
/// both refuse a request through ``refuse(_:_:_:)`` so the answer goes straight to the socket,
/// below the HTTP encoder whose state a half-read request leaves undefined.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Accepted, its first request head not complete yet.
        case awaitingFirstHead(bytes: Int)
        /// A request head arrived: HTTP handlers time the rest.
        case serving
        /// Refused or closed.
        case closed
    }

    private let limits: ConnectionLimits
    private let table: ConnectionTable
    private let logger: Logger
    private var state = State.awaitingFirstHead(bytes: 0)
    private var address: String?
    private var headTimer: Scheduled<Void>?
    private var drainTimer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(limits: ConnectionLimits, table: ConnectionTable, logger: Logger) {
        self.limits = limits
        self.table = table
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimers()
        release()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimers()
        release()
        state = .closed
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .awaitingFirstHead(let bytes) = state else {
            if case .serving = state { context.fireChannelRead(data) }
            return
        }
        let total = bytes + unwrapInboundIn(data).readableBytes
        state = .awaitingFirstHead(bytes: total)
        context.fireChannelRead(data)
        // The decoder signals a complete head during the read above; still waiting with more
        // bytes than a head may have means the head is too large.
        if case .awaitingFirstHead = state, total > limits.maximumHeadBytes {
            refuse(.requestHeaderFieldsTooLarge, .headTooLarge,
                   "The request head is over \(limits.maximumHeadBytes) bytes: send shorter headers and a shorter path.")
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            switch state {
            case .awaitingFirstHead:
                // Nothing is being answered: nothing to drain.
                stopTimers()
                state = .closed
                context.close(promise: nil)
            case .serving:
                if drainTimer == nil {
                    drainTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limits.drainTimeout)) { [weak self] in
                        self?.drainExpired()
                    }
                }
            case .closed:
                break
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// A request head was decoded: from here on the HTTP handlers time the connection.
    func headArrived() {
        guard case .awaitingFirstHead = state else { return }
        state = .serving
        headTimer?.cancel()
        headTimer = nil
    }

    /// Answers `status` with the API's JSON error shape straight to the socket and closes the
    /// connection; nothing more is read from it.
    func refuse(_ status: HTTPResponse.Status, _ code: LobbyError.Code, _ message: String, retryAfter: Int? = nil) {
        guard let context else { return }
        if case .closed = state { return }
        state = .closed
        stopTimers()
        var json = JSONWriter(escaping: .minimal)
        json.object { json in
            json.key("error")
            json.object { json in
                json.member("code", code.rawValue)
                json.member("message", message)
            }
        }
        let body = json.text
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\ncontent-type: application/json; charset=utf-8\r\n"
        if let retryAfter { head += "retry-after: \(retryAfter)\r\n" }
        head += "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n"
        let buffer = context.channel.allocator.buffer(string: head + body)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// Closes the connection without an answer (one was being written, or it is gone).
    func close() {
        guard let context else { return }
        if case .closed = state { return }
        state = .closed
        stopTimers()
        context.close(promise: nil)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard address == nil, case .awaitingFirstHead = state else { return }
        let address = context.channel.remoteAddress?.ipAddress ?? "local"
        guard table.open(address) else {
            logger.notice("Refused a connection from \(address): it holds \(limits.maximumConnectionsPerAddress) already.")
            refuse(.tooManyRequests, .tooManyConnections,
                   "This address holds \(limits.maximumConnectionsPerAddress) connections to the lobby already: close some (or reuse them) and try again.",
                   retryAfter: 1)
            return
        }
        self.address = address
        headTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limits.headTimeout)) { [weak self] in
            self?.headExpired()
        }
    }

    private func headExpired() {
        headTimer = nil
        guard case .awaitingFirstHead = state else { return }
        logger.debug("Closed a connection from \(address ?? "?") that sent no complete request within \(limits.headTimeout).")
        refuse(.requestTimeout, .requestTimeout,
               "No complete request arrived within \(Self.seconds(limits.headTimeout)) s of connecting: send the whole request head at once.")
    }

    private func drainExpired() {
        drainTimer = nil
        logger.debug("Closed a connection from \(address ?? "?") still busy \(limits.drainTimeout) after shutdown began.")
        close()
    }

    private func stopTimers() {
        headTimer?.cancel()
        headTimer = nil
        drainTimer?.cancel()
        drainTimer = nil
    }

    private func release() {
        if let address {
            table.close(address)
            self.address = nil
        }
    }

    static func seconds(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
