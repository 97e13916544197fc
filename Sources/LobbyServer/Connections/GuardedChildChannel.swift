import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A server child channel (the lobby's HTTP/1 + WebSocket upgrade channel) with
/// ``ConnectionGuard`` in front of it and ``RequestWatch`` after its HTTP decoder.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let limits: ConnectionLimits
    let table: ConnectionTable

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = limits
        let table = table
        let inner = inner
        return channel.eventLoop.makeCompletedFuture {
            let connectionGuard = ConnectionGuard(limits: limits, table: table, logger: logger)
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
            return NIOLoopBound(connectionGuard, eventLoop: channel.eventLoop)
        }.flatMap { connectionGuard in
            inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try channel.pipeline.syncOperations.addHandler(
                    RequestWatch(limits: limits, connectionGuard: connectionGuard.value), position: .after(decoder))
                return value
            }
        }
    }

    func handle(value: Value, logger: Logger) async {
        // The upgrade channel logs an error whenever a connection closes before its first request
        // head is parsed: for every connection ConnectionGuard cut or refused (and every client
        // that connected and left), which it logs itself at the right level. This logger serves
        // only that channel's own messages (requests log through the application's logger).
        var channelLogger = logger
        channelLogger.logLevel = max(logger.logLevel, .critical)
        await inner.handle(value: value, logger: channelLogger)
    }
}
