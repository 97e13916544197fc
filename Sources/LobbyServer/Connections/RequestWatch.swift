import Hummingbird
import NIOCore
import NIOHTTP1

/// Sits right after the HTTP decoder of a lobby connection and times each request: it tells
/// ``ConnectionGuard`` when the first head is complete, gives each body
/// ``ConnectionLimits/bodyTimeout`` to arrive, and answers a request the decoder cannot parse
/// (unknown method, bad header, head too large) with 400 or 431 before closing the connection.
///
/// It leaves the pipeline when the first request asks for a WebSocket upgrade: that connection
/// either becomes a WebSocket (with its own pings) or is answered and closed.
final class RequestWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limits: ConnectionLimits
    private let connectionGuard: ConnectionGuard
    private var bodyTimer: Scheduled<Void>?
    private var answering = false
    /// Request heads and ends read, and answers finished, on this connection.
    private var requests = 0
    private var requestEnds = 0
    private var answers = 0

    init(limits: ConnectionLimits, connectionGuard: ConnectionGuard) {
        self.limits = limits
        self.connectionGuard = connectionGuard
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        bodyTimer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        bodyTimer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            requests += 1
            connectionGuard.headArrived()
            // A request sent behind another (pipelined) is read only once the one before is
            // answered: its time starts then, not while the lobby is busy.
            if requests - answers == 1 { startBodyTimer(context) }
            // An upgrade without a token could only fail, and a failed upgrade is answered by
            // the WebSocket library with an empty 400: as a plain request it gets the API's 401.
            if head.headers.contains(name: "upgrade"),
               AuthenticationMiddleware.bearerToken(header: head.headers.first(name: "authorization")).map({ $0.isEmpty }) ?? true {
                head.headers.remove(name: "upgrade")
                let connection = head.headers[canonicalForm: "connection"].filter { $0.lowercased() != "upgrade" }
                head.headers.remove(name: "connection")
                if !connection.isEmpty { head.headers.add(name: "connection", value: connection.joined(separator: ", ")) }
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
            context.fireChannelRead(data)
            if requests == 1, head.headers.contains(name: "upgrade") {
                bodyTimer?.cancel()
                bodyTimer = nil
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        case .body:
            context.fireChannelRead(data)
        case .end:
            requestEnds += 1
            bodyTimer?.cancel()
            bodyTimer = nil
            context.fireChannelRead(data)
        }
    }

    private func startBodyTimer(_ context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        bodyTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limits.bodyTimeout)) { [weak self] in
            self?.bodyExpired()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: answering = true
        case .end:
            answering = false
            answers += 1
            // The next request, already begun, is the one being read now.
            if requests > answers, requestEnds < requests { startBodyTimer(context) }
        case .body: break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        bodyTimer?.cancel()
        bodyTimer = nil
        if answering {
            connectionGuard.close()
        } else if case .headerOverflow = error {
            connectionGuard.refuse(.requestHeaderFieldsTooLarge, .headTooLarge,
                                   "The request head is over \(limits.maximumHeadBytes) bytes: send shorter headers and a shorter path.")
        } else {
            connectionGuard.refuse(.badRequest, .malformedRequest,
                                   "The request is not valid HTTP/1.1 (\(error)): check its method, request line and header fields.")
        }
    }

    private func bodyExpired() {
        bodyTimer = nil
        if answering {
            connectionGuard.close()
        } else {
            connectionGuard.refuse(.requestTimeout, .requestTimeout,
                                   "The request body did not arrive within \(ConnectionGuard.seconds(limits.bodyTimeout)) s of its head: send it at once.")
        }
    }
}
