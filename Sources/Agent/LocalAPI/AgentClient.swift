import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Radio

/// The CLI's side of the local API: connects to the agent's socket, sends one request, reads
/// the answer (or, for `events`, every line until the agent goes away). The socket is a
/// `NIOAsyncChannel`, as on the server; ``send(_:timeout:)`` and ``events(recent:idleTimeout:_:)``
/// are the blocking forms for threads that may wait (the CLI's main thread, a test's thread).
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

    /// ``request(_:timeout:)`` for a thread that may block until the answer comes.
    public func send(_ request: AgentRequest, timeout: Double = 60) throws(AgentError) -> Data {
        try Self.blockUntilDone { () async throws(AgentError) -> Data in try await self.request(request, timeout: timeout) }
    }

    /// ``streamEvents(recent:idleTimeout:_:)`` for a thread that may block while it lasts; `body`
    /// runs on another thread meanwhile, one line after the other.
    public func events(recent: Int = 0, idleTimeout: Int? = nil, _ body: (String) -> Bool) throws(AgentError) {
        let result = withoutActuallyEscaping(body) { body in
            // The calling thread waits for the stream to end, so `body` is never called at the
            // same time as anything else it touches.
            // The task that ran the stream can outlive `blockUntilDone` by a moment (it signals
            // before it is released), so the box lets go of `body` here, on the caller's thread,
            // before `withoutActuallyEscaping` checks that nothing kept it.
            let unchecked = UncheckedBody(body: body)
            defer { unchecked.release() }
            return Result { () throws(AgentError) in
                try Self.blockUntilDone { () async throws(AgentError) in
                    try await self.streamEvents(recent: recent, idleTimeout: idleTimeout) { unchecked.call($0) }
                }
            }
        }
        try result.get()
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
            close(fd)
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

    /// A connection to the agent, or why there is none, said for the person at the terminal.
    func connect() throws(AgentError) -> Int32 {
        do {
            return try UnixSocket.connect(path: path)
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

    /// Runs `work` on the task pool and blocks the calling thread until it is done. Only for
    /// threads that are not the pool's: the CLI's main thread, a thread of the caller's own.
    static func blockUntilDone<T: Sendable>(_ work: @escaping @Sendable () async throws(AgentError) -> T) throws(AgentError) -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(AgentError) {
                outcome.result = .success(try await work())
            } catch {
                outcome.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
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

/// A result handed from the task that computed it to the thread that waits for it (the
/// semaphore orders the two).
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, AgentError>?
}

/// A caller's closure, called only while that caller waits, and let go of when it stops waiting.
private final class UncheckedBody: @unchecked Sendable {
    private var body: ((String) -> Bool)?
    init(body: @escaping (String) -> Bool) { self.body = body }
    func call(_ line: String) -> Bool { body?(line) ?? false }
    func release() { body = nil }
}
