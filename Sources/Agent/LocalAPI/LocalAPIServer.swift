import Foundation
import Logging
import NIOCore
import NIOPosix
import Radio
import Synchronization

/// The agent's local API: a Unix stream socket in a folder only the owner can enter, the socket
/// itself 0600, and every connection's peer checked with `SO_PEERCRED`, so other users are
/// refused even if the permissions were loosened. One JSON request per line, one JSON response
/// per line (``AgentRequest``, ``AgentResponse``); `events` streams until the client hangs up.
public final class LocalAPIServer: Sendable {
    public typealias Handler = @Sendable (AgentRequest) async -> AgentResponse

    public let path: String
    private let allowedUser: uid_t
    private let handler: Handler
    private let eventStream: @Sendable (Int) -> AsyncStream<AgentEvent>
    private let logger: Logger
    private let state = Mutex(State())
    /// The longest request line accepted.
    static let maximumLine = 64 * 1024
    /// Requests of one connection being answered at once; further lines wait unread in the
    /// socket until one finishes.
    static let maximumRequestsInFlight = 8
    /// Answer bytes one connection may leave unread; past it the agent reads no more of its
    /// requests (and an `events` stream that far behind is ended), so a client that sends and
    /// never reads holds at most this much, and never a thread.
    static let maximumUnreadReplyBytes = 256 * 1024

    private struct State {
        /// Accepts and serves; cancelled by ``stop()``.
        var task: Task<Void, Never>?
        var connections: [ObjectIdentifier: ConnectionLoad] = [:]
    }

    /// - Parameter allowedUser: the only uid served (this process's own by default).
    public init(path: String, allowedUser: uid_t = getuid(), logger: Logger = Logger(label: "nearplay.local-api"),
                events: @escaping @Sendable (_ recent: Int) -> AsyncStream<AgentEvent>, handler: @escaping Handler) {
        self.path = path
        self.allowedUser = allowedUser
        self.handler = handler
        self.eventStream = events
        self.logger = logger
    }

    /// Binds and listens, then accepts and serves on a task of its own until ``stop()``. Refuses
    /// to start when another agent answers on the path; removes a stale socket left by a killed one.
    ///
    /// The socket is bound by ``UnixSocket/listen(path:mode:)`` and then handed to NIO: it is
    /// owner-only from the moment the file exists and never replaces a live agent's socket, which
    /// `ServerBootstrap.bind(unixDomainSocketPath:)` does not promise.
    public func start() throws(AgentError) {
        let folder = (path as NSString).deletingLastPathComponent
        try makePrivateDirectory(folder)
        let fd: Int32
        do {
            fd = try UnixSocket.listen(path: path, mode: 0o600)
        } catch where error.code == EADDRINUSE {
            throw AgentError("Another agent is already running on \(path); stop it first (or give this one another socket).", code: "alreadyRunning")
        } catch {
            throw AgentError("Cannot open the local API: \(error).")
        }
        state.withLock { $0.task = Task(executorPreference: EventLoopTaskExecutor.of(MultiThreadedEventLoopGroup.singleton.any())) {
            await self.serve(listening: fd)
        } }
        logger.info("local API listening on \(path)")
    }

    /// Stops listening, closes every connection and removes the socket.
    public func stop() {
        let (task, connections) = state.withLock { state in
            defer {
                state.task = nil
                state.connections = [:]
            }
            return (state.task, Array(state.connections.values))
        }
        guard let task else { return }
        task.cancel()
        for connection in connections { connection.close() }
        unlink(path)
    }

    /// What connections hold now, for tests and benchmarks: requests being answered and answer
    /// bytes their clients have not read yet.
    public var held: (requests: Int, unreadReplyBytes: Int, connections: Int) {
        let connections = state.withLock { Array($0.connections.values) }
        return connections.reduce(into: (0, 0, connections.count)) { total, connection in
            let load = connection.load
            total.0 += load.requests
            total.1 += load.unreadReplyBytes
        }
    }

    /// Accepts connections on `listener` until the task is cancelled, each served in a child task.
    private func serve(listening listener: Int32) async {
        let server: NIOAsyncChannel<AcceptedConnection?, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                // A client that shuts down its side still gets the answers to what it sent.
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                // Room for the unread answers the limit allows (checked before each line and
                // event), so a write rarely waits.
                .childChannelOption(.writeBufferWaterMark, value: .init(low: Self.maximumUnreadReplyBytes / 2,
                                                                        high: Self.maximumUnreadReplyBytes + 64 * 1024))
                .bind(NIOBSDSocket.Handle(listener)) { channel in self.admit(channel) }
        } catch {
            logger.error("local API: cannot serve \(path): \(error)")
            return
        }
        do {
            try await withTaskCancellationHandler {
                try await server.executeThenClose { accepted in
                    await withDiscardingTaskGroup { group in
                        do {
                            for try await connection in accepted {
                                guard let connection else { continue }
                                // The connection's reading and writing runs on its own event loop,
                                // as its dispatch sources ran on a queue, never on Swift's task
                                // pool: a pool that the requests of other clients (or anything
                                // else in the process) keep busy cannot hold up another client.
                                group.addTask(executorPreference: EventLoopTaskExecutor.of(connection.channel.channel.eventLoop)) {
                                    await self.serve(connection)
                                }
                            }
                        } catch {
                            if !Task.isCancelled { logger.warning("local API: \(error)") }
                        }
                        group.cancelAll()
                    }
                }
            } onCancel: {
                server.channel.close(promise: nil)
            }
        } catch {
            logger.warning("local API: \(error)")
        }
    }

    /// Runs on the connection's event loop before anything is read from it: checks the peer's
    /// credentials, and either refuses it (writes why, then closes) or readies it for serving.
    private func admit(_ channel: any Channel) -> EventLoopFuture<AcceptedConnection?> {
        let peer: EventLoopFuture<PeerCredentials?> = (channel as? any SocketOptionProvider).map {
            $0.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
                .map { Optional($0) }
                .recover { _ in nil }
        } ?? channel.eventLoop.makeSucceededFuture(nil)
        return peer.flatMapThrowing { [allowedUser, logger] peer in
            guard let peer, peer.uid == allowedUser else {
                let uid = peer.map { String($0.uid) } ?? "unknown"
                logger.notice("refused a local API connection from uid \(uid)")
                let refusal = AgentResponse.failure(AgentError(
                    "This agent belongs to uid \(allowedUser); uid \(uid) may not use it.", code: "permissionDenied")).line + "\n"
                channel.writeAndFlush(ByteBuffer(string: refusal)).whenComplete { _ in channel.close(promise: nil) }
                return nil
            }
            let connection = ConnectionLoad(channel: channel)
            try channel.pipeline.syncOperations.addHandlers(
                ReplyBacklogHandler(load: connection),
                ByteToMessageHandler(LineDecoder(maximumLength: Self.maximumLine)))
            // Few lines wait decoded: the rest stay unread in the socket.
            let configuration = NIOAsyncChannel<ProtocolLine, ByteBuffer>.Configuration(
                backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8))
            return AcceptedConnection(
                channel: try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: configuration),
                load: connection)
        }
    }

    /// Serves one connection until its client has sent everything and been answered, it hangs up,
    /// or the server stops. Takes the next line only while fewer than
    /// ``maximumRequestsInFlight`` requests are being answered and fewer than
    /// ``maximumUnreadReplyBytes`` answer bytes wait, so what a client sends beyond that waits in
    /// the kernel, not in the agent.
    private func serve(_ connection: AcceptedConnection) async {
        let load = connection.load
        let key = ObjectIdentifier(load)
        let registered = state.withLock { state in
            guard state.task != nil else { return false }
            state.connections[key] = load
            return true
        }
        guard registered else { return connection.load.close() }
        defer { _ = state.withLock { $0.connections.removeValue(forKey: key) } }
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                let replies = ReplyWriter(outbound: outbound, load: load)
                await withTaskGroup(of: Void.self) { group in
                    var inFlight = 0
                    do {
                        lines: for try await item in inbound {
                            // Past half the unread limit, one request at a time: the answers
                            // in flight then carry a connection at most one answer past it.
                            while inFlight >= Self.maximumRequestsInFlight || load.unreadReplyBytes >= Self.maximumUnreadReplyBytes
                                || (inFlight > 0 && load.unreadReplyBytes >= Self.maximumUnreadReplyBytes / 2) {
                                if inFlight > 0, await group.next() != nil {
                                    inFlight -= 1
                                } else {
                                    guard await load.waitForRoom(below: Self.maximumUnreadReplyBytes) else { break lines }
                                }
                            }
                            switch item {
                            case .tooLong:
                                await replies.write(AgentResponse.failure(AgentError(
                                    "The request line is longer than \(Self.maximumLine) bytes.", code: "badRequest")).line)
                                break lines
                            case .line(let text):
                                if text.allSatisfy(\.isWhitespace) { continue }
                                guard let task = await self.task(for: text, replies: replies, connection: connection) else { continue }
                                load.started()
                                inFlight += 1
                                // Only the request's own work runs on the task pool.
                                group.addTask(executorPreference: globalConcurrentExecutor) {
                                    await task()
                                    load.finished()
                                }
                            }
                        }
                    } catch {
                        logger.debug("local API connection: \(error)")
                    }
                    // Input ended (or broke): answer what was asked, then close.
                    await group.waitForAll()
                }
                _ = await load.waitForRoom(below: 1)
            }
        } catch {
            logger.debug("local API connection: \(error)")
        }
    }

    /// What answering `line` takes: nil when it was answered at once (a malformed request).
    /// A malformed request is answered here, before the next line is read, so its answer comes
    /// before those of the requests after it (a client pipelining requests reads the error first).
    private func task(for line: String, replies: ReplyWriter, connection: AcceptedConnection) async -> (@Sendable () async -> Void)? {
        let request: AgentRequest
        do {
            request = try AgentRequest(line: line)
        } catch {
            await replies.write(AgentResponse.failure(error).line)
            return nil
        }
        if case .events(let recent) = request {
            let events = eventStream(recent)
            let load = connection.load
            return {
                for await event in events {
                    // A stream reader that fell this far behind is dropped rather than buffered.
                    guard load.unreadReplyBytes < Self.maximumUnreadReplyBytes else { return load.close() }
                    guard await replies.write(event.jsonLine) else { return }
                }
            }
        }
        let handler = handler
        return {
            let response = await handler(request)
            await replies.write(response.line)
        }
    }
}

/// A connection that passed the credential check, with the counters it shares with the server.
private struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ProtocolLine, ByteBuffer>
    let load: ConnectionLoad
}

/// Writes answer lines to one connection, counting their bytes as unread until the socket took them.
private struct ReplyWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let load: ConnectionLoad

    /// False once the connection cannot take more.
    @discardableResult
    func write(_ line: String) async -> Bool {
        let buffer = ByteBuffer(string: line + "\n")
        load.queued(buffer.readableBytes)
        do {
            try await outbound.write(buffer)
            return true
        } catch {
            load.written(buffer.readableBytes)
            return false
        }
    }
}

/// What one connection holds, shared by its serving task, the event loop (bytes the socket took)
/// and the server's ``LocalAPIServer/held``.
private final class ConnectionLoad: Sendable {
    struct Load {
        var requests = 0
        var unreadReplyBytes = 0
        var closed = false
        var waiting: [(limit: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(Load())
    private let channel: any Channel

    init(channel: any Channel) {
        self.channel = channel
        channel.closeFuture.whenComplete { [weak self] _ in self?.closed() }
    }

    var load: Load { state.withLock { $0 } }
    var requests: Int { state.withLock { $0.requests } }
    var unreadReplyBytes: Int { state.withLock { $0.unreadReplyBytes } }

    func started() { state.withLock { $0.requests += 1 } }
    func finished() { state.withLock { $0.requests -= 1 } }
    func queued(_ bytes: Int) { state.withLock { $0.unreadReplyBytes += bytes } }

    func written(_ bytes: Int) {
        let ready = state.withLock { state in
            state.unreadReplyBytes -= bytes
            let unread = state.unreadReplyBytes
            let ready = state.waiting.filter { unread < $0.limit }
            state.waiting.removeAll { unread < $0.limit }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Waits until fewer than `limit` answer bytes are unread; false when the connection closed first.
    func waitForRoom(below limit: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.closed { return false }
                if state.unreadReplyBytes < limit { return true }
                state.waiting.append((limit, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Closes the connection; its serving task ends.
    func close() {
        channel.close(promise: nil)
    }

    private func closed() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.continuation.resume(returning: false) }
    }
}

/// Counts an answer's bytes as read by the client once the socket has taken them.
private final class ReplyBacklogHandler: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let load: ConnectionLoad

    init(load: ConnectionLoad) { self.load = load }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data).readableBytes
        let promise = promise ?? context.eventLoop.makePromise()
        promise.futureResult.whenComplete { [load] _ in load.written(bytes) }
        context.write(data, promise: promise)
    }
}
