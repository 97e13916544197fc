import Foundation
import NIOCore
import NIOPosix
import Radio

/// The CLI's side of the local API: connects to the agent's socket, sends one request, reads
/// the answer (or, for `events`, every line until the agent goes away). The socket is a NIO
/// channel framed by ``LineDecoder``, as on the server: ``request(_:timeout:)`` and
/// ``streamEvents(recent:idleTimeout:_:)`` read it as a `NIOAsyncChannel`;
/// ``send(_:timeout:)`` and ``events(recent:idleTimeout:_:)`` are the blocking forms for threads
/// that may wait (the CLI's main thread, a test's thread), and wait for the event loop without
/// ever needing a thread of Swift's task pool.
public struct AgentClient: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Sends `request` and returns the result's JSON; an error response is thrown.
    public func request(_ request: AgentRequest, timeout: Double = 60) async throws(AgentError) -> Data {
        // As SO_RCVTIMEO did: 0 waits for ever.
        let idle: TimeAmount? = timeout > 0 ? .nanoseconds(Int64(timeout * 1e9)) : nil
        let line = try await exchange(request, idleTimeout: idle) { lines in
            try await lines.next()
        }
        guard let line else {
            throw AgentError("The agent on \(path) did not answer within \(Int(timeout)) s.", code: "agentNotRunning")
        }
        switch try AgentResponse(line: line) {
        case .result(let data): return data
        case .failure(let error): throw error
        }
    }

    /// Streams the agent's last `recent` events, then every new one, to `body` until it returns
    /// false or the agent goes away (or, with `idleTimeout`, stays silent that many seconds).
    public func streamEvents(recent: Int = 0, idleTimeout: Int? = nil, _ body: @Sendable (String) -> Bool) async throws(AgentError) {
        let refusal: AgentError? = try await exchange(.events(recent: recent), idleTimeout: idleTimeout.map { .seconds(Int64($0)) }) { lines in
            while let line = try await lines.next() {
                if line.hasPrefix("{\"ok\":false"), case .failure(let error)? = try? AgentResponse(line: line) { return error }
                if !body(line) { return nil }
            }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// ``request(_:timeout:)`` for a thread that may block until the answer comes (the CLI's
    /// main thread, a test's thread). It never needs a thread of Swift's task pool: NIO's event
    /// loop reads the socket and the calling thread waits for the line, so a pool that other
    /// blocking waits occupy cannot hold the answer up.
    public func send(_ request: AgentRequest, timeout: Double = 60) throws(AgentError) -> Data {
        var answer: String?
        // As SO_RCVTIMEO did: 0 waits for ever.
        let end = try exchangeBlocking(request, idleTimeout: timeout > 0 ? timeout : nil) { line in
            answer = line
            return false
        }
        guard let line = answer else {
            if end == .timedOut {
                throw AgentError("The agent on \(path) did not answer within \(Int(timeout)) s.", code: "agentNotRunning")
            }
            throw AgentError("The agent on \(path) hung up before it answered; see its log, then start it again with `nearplay agent`.",
                             code: "agentNotRunning")
        }
        switch try AgentResponse(line: line) {
        case .result(let data): return data
        case .failure(let error): throw error
        }
    }

    /// ``streamEvents(recent:idleTimeout:_:)`` for a thread that may block while it lasts. `body`
    /// runs on the calling thread, one line after the other, and is not kept after the call.
    public func events(recent: Int = 0, idleTimeout: Int? = nil, _ body: (String) -> Bool) throws(AgentError) {
        try exchangeBlocking(.events(recent: recent), idleTimeout: idleTimeout.map(Double.init)) { line throws(AgentError) in
            if line.hasPrefix("{\"ok\":false"), case .failure(let error)? = try? AgentResponse(line: line) { throw error }
            return body(line)
        }
    }
}

extension AgentClient {
    /// Connects, sends `request`, and hands the answer lines to `body`; the lines end when the
    /// agent closes the connection, or when it stays silent for `idleTimeout`.
    func exchange<T: Sendable>(_ request: AgentRequest, idleTimeout: TimeAmount?,
                               _ body: @Sendable (inout AnswerLines) async throws -> T) async throws(AgentError) -> T {
        let fd = try connect()
        let channel: NIOAsyncChannel<ProtocolLine, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .withConnectedSocket(NIOBSDSocket.Handle(fd)) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let idleTimeout {
                            try channel.pipeline.syncOperations.addHandlers(IdleStateHandler(readTimeout: idleTimeout), CloseWhenIdle())
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                        return try NIOAsyncChannel<ProtocolLine, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            // NIO owns the descriptor once it was handed over, and has closed it.
            throw AgentError("Cannot reach the agent on \(path): \(error).", code: "agentNotRunning")
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                // A refused connection finds the agent gone here; its refusal is still read below.
                try? await outbound.write(ByteBuffer(string: request.line + "\n"))
                var lines = AnswerLines(iterator: inbound.makeAsyncIterator())
                return try await body(&lines)
            }
        } catch {
            throw AgentError("The agent on \(path) hung up: \(error).", code: "agentNotRunning")
        }
    }

    /// Connects, sends `request`, and hands the answer lines to `body` on the calling thread
    /// until it returns false, the agent closes the connection, or no line comes for
    /// `idleTimeout` seconds; says which ended it. The connection is the async form's (one NIO
    /// channel with the same ``LineDecoder``), but nothing of it runs on Swift's task pool: the
    /// event loop hands each line over through a ``LineHandoff`` and the calling thread waits on
    /// it, as it waited on a blocking `recv` before.
    @discardableResult
    func exchangeBlocking(_ request: AgentRequest, idleTimeout: Double?,
                          _ body: (String) throws(AgentError) -> Bool) throws(AgentError) -> LineHandoff.End {
        // Blocking: a listener whose backlog is full makes the caller wait, not fail.
        let fd = try connect(blocking: true)
        let handoff = LineHandoff()
        let channel: any Channel
        do {
            channel = try ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineDecoder()), LineHandoffHandler(handoff))
                    }
                }
                .withConnectedSocket(NIOBSDSocket.Handle(fd))
                .wait()
        } catch {
            // NIO owns the descriptor once it was handed over, and has closed it.
            throw AgentError("Cannot reach the agent on \(path): \(error).", code: "agentNotRunning")
        }
        defer { try? channel.close().wait() }
        // An agent that refuses the connection writes why and closes; that line is still read below.
        channel.writeAndFlush(ByteBuffer(string: request.line + "\n"), promise: nil)
        while true {
            let next = handoff.next(within: idleTimeout)
            if next.resumeReading { channel.read() }
            switch next.item {
            case .line(let line):
                guard try body(line) else { return .stopped }
            case .end(let end):
                return end
            }
        }
    }

    /// A connection to the agent, or why there is none, said for the person at the terminal.
    func connect(blocking: Bool = false) throws(AgentError) -> Int32 {
        do {
            return try UnixSocket.connect(path: path, blocking: blocking)
        } catch {
            switch error.code {
            case ENOENT, ECONNREFUSED:
                throw AgentError("No agent is running (nothing listens on \(path)): start one with `nearplay agent`.", code: "agentNotRunning")
            case EACCES, EPERM:
                throw AgentError("Permission denied on \(path): the agent there belongs to another user.", code: "permissionDenied")
            default:
                throw AgentError("Cannot reach the agent: \(error).", code: "agentNotRunning")
            }
        }
    }
}

/// The answer lines of one exchange; nil at their end, after a broken connection too.
struct AnswerLines {
    var iterator: NIOAsyncChannelInboundStream<ProtocolLine>.AsyncIterator

    mutating func next() async throws -> String? {
        guard case .line(let text)? = try? await iterator.next() else { return nil }
        return text
    }
}

/// Closes a connection that read nothing for the ``IdleStateHandler``'s time.
private final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// Answer lines handed from the event loop that reads them to the thread that waits for them.
/// At most ``room`` lines wait: past it the event loop stops reading, so an agent's stream to a
/// slow reader stays in the socket (where the agent sees it fall behind), not in this process.
final class LineHandoff: @unchecked Sendable {
    enum End: Equatable {
        /// The agent closed the connection (or it broke).
        case closed
        /// No line came for the idle timeout.
        case timedOut
        /// The reader wanted no more.
        case stopped
    }

    enum Item {
        case line(String)
        case end(End)
    }

    static let room = 64
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var lines: [String] = []
    private var first = 0
    private var closed = false
    private var readHeld = false

    /// Event loop: a line arrived.
    func append(_ line: String) {
        condition.withLock {
            lines.append(line)
            condition.signal()
        }
    }

    /// Event loop: the connection is closed; the lines already here are still taken.
    func close() {
        condition.withLock {
            closed = true
            condition.signal()
        }
    }

    /// Event loop: whether to read more now; when not, the read is held until the reader makes room.
    func mayRead() -> Bool {
        condition.withLock {
            readHeld = lines.count - first >= Self.room
            return !readHeld
        }
    }

    /// Waiting thread: the next line, or why there is none, waiting at most `timeout` seconds
    /// (for ever when nil); `resumeReading` says the event loop's held read should go on.
    func next(within timeout: Double?) -> (item: Item, resumeReading: Bool) {
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
        return condition.withLock {
            while first == lines.count && !closed {
                if let deadline {
                    if !condition.wait(until: deadline) && first == lines.count && !closed { return (.end(.timedOut), false) }
                } else {
                    condition.wait()
                }
            }
            guard first < lines.count else { return (.end(.closed), false) }
            let line = lines[first]
            first += 1
            if first == lines.count {
                lines.removeAll(keepingCapacity: true)
                first = 0
            }
            let resume = readHeld && lines.count - first < Self.room
            if resume { readHeld = false }
            return (.line(line), resume)
        }
    }
}

/// Hands a blocking exchange's lines to its ``LineHandoff`` and holds NIO's reads while the
/// handoff is full.
private final class LineHandoffHandler: ChannelDuplexHandler {
    typealias InboundIn = ProtocolLine
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let handoff: LineHandoff

    init(_ handoff: LineHandoff) { self.handoff = handoff }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .line(let text) = unwrapInboundIn(data) { handoff.append(text) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        handoff.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if handoff.mayRead() { context.read() }
    }
}
