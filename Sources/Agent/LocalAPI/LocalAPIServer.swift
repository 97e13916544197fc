import Foundation
import Logging
import Radio

/// The agent's local API: a Unix stream socket in a folder only the owner can enter, the socket
/// itself 0600, and every connection's peer checked with `SO_PEERCRED`, so other users are
/// refused even if the permissions were loosened. One JSON request per line, one JSON response
/// per line (``AgentRequest``, ``AgentResponse``); `events` streams until the client hangs up.
public final class LocalAPIServer: @unchecked Sendable {
    public typealias Handler = @Sendable (AgentRequest) async -> AgentResponse

    public let path: String
    private let allowedUser: uid_t
    private let handler: Handler
    private let eventStream: @Sendable (Int) -> AsyncStream<AgentEvent>
    private let logger: Logger
    private let queue = DispatchQueue(label: "nearplay.local-api")
    // Guarded by `lock` (dispatch sources are not Sendable, so no Mutex).
    private let lock = NSLock()
    private var state = State()
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
        var listener: Int32 = -1
        var acceptSource: (any DispatchSourceRead)?
        var connections: [Int32: Connection] = [:]
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

    /// Binds and listens. Refuses to start when another agent answers on the path; removes a
    /// stale socket left by a killed one.
    public func start() throws(AgentError) {
        let folder = (path as NSString).deletingLastPathComponent
        try makePrivateDirectory(folder)
        let fd: Int32
        do {
            // Owner-only from the moment the file exists; a stale socket of a killed agent is replaced.
            fd = try UnixSocket.listen(path: path, mode: 0o600)
        } catch where error.code == EADDRINUSE {
            throw AgentError("Another agent is already running on \(path); stop it first (or give this one another socket).", code: "alreadyRunning")
        } catch {
            throw AgentError("Cannot open the local API: \(error).")
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptPending(fd) }
        lock.withLock {
            state.listener = fd
            state.acceptSource = source
        }
        source.resume()
        logger.info("local API listening on \(path)")
    }

    /// Stops listening, closes every connection and removes the socket.
    public func stop() {
        let (source, connections, listener) = lock.withLock {
            defer {
                state.acceptSource = nil
                state.connections = [:]
                state.listener = -1
            }
            return (state.acceptSource, Array(state.connections.values), state.listener)
        }
        guard let source else { return }
        source.setCancelHandler { close(listener) }
        source.cancel()
        queue.sync { for connection in connections { connection.close() } }
        unlink(path)
    }

    private func acceptPending(_ listener: Int32) {
        while true {
            let accepted: Int32?
            do {
                accepted = try UnixSocket.accept(listener, path: path)
            } catch {
                logger.warning("local API: \(error)")
                return
            }
            guard let fd = accepted else { return }
            guard let peer = PeerCredentials(socket: fd), peer.uid == allowedUser else {
                let uid = PeerCredentials(socket: fd).map { String($0.uid) } ?? "unknown"
                logger.notice("refused a local API connection from uid \(uid)")
                let refusal = AgentResponse.failure(AgentError(
                    "This agent belongs to uid \(allowedUser); uid \(uid) may not use it.", code: "permissionDenied")).line + "\n"
                try? UnixSocket.writeAll(fd, Array(refusal.utf8), path: path)
                close(fd)
                continue
            }
            let connection = Connection(fd: fd, server: self, queue: queue)
            lock.withLock { state.connections[fd] = connection }
            connection.start()
        }
    }

    /// What connections hold now, for tests and benchmarks: requests being answered and answer
    /// bytes their clients have not read yet.
    public var held: (requests: Int, unreadReplyBytes: Int, connections: Int) {
        let connections = lock.withLock { Array(state.connections.values) }
        return queue.sync {
            connections.reduce(into: (0, 0, connections.count)) { total, connection in
                total.0 += connection.requestsInFlight
                total.1 += connection.unreadReplyBytes
            }
        }
    }

    fileprivate func closed(_ fd: Int32) {
        _ = lock.withLock { state.connections.removeValue(forKey: fd) }
    }

    fileprivate func serve(_ line: Substring, on connection: Connection) {
        let request: AgentRequest
        do {
            request = try AgentRequest(line: line)
        } catch {
            connection.enqueue(AgentResponse.failure(error).line)
            return
        }
        if case .events(let recent) = request {
            let stream = eventStream(recent)
            connection.stream(stream)
            return
        }
        let handler = handler
        connection.run {
            let response = await handler(request)
            connection.reply(response.line)
        }
    }
}

/// One client of the local API. Everything it holds is touched on the server's serial queue
/// only: the bytes read and not yet parsed (at most one line), the requests being answered (at
/// most ``LocalAPIServer/maximumRequestsInFlight``) and the answer bytes not yet taken by the
/// client (past ``LocalAPIServer/maximumUnreadReplyBytes`` it stops reading requests). Writes
/// never block: what the socket does not take waits for a write source.
private final class Connection: @unchecked Sendable {
    let fd: Int32
    private unowned let server: LocalAPIServer
    private let queue: DispatchQueue
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var readSuspended = false
    private var openSources = 0
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextTask = 0
    private var closed = false
    private var endOfInput = false

    init(fd: Int32, server: LocalAPIServer, queue: DispatchQueue) {
        self.fd = fd
        self.server = server
        self.queue = queue
    }

    /// Requests being answered (queue only).
    var requestsInFlight: Int { tasks.count }
    /// Answer bytes written to the buffer and not yet to the socket (queue only).
    var unreadReplyBytes: Int { output.count - outputOffset }

    /// Called on the queue.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self] in readAvailable() }
        source.setCancelHandler { [self] in sourceCancelled() }
        readSource = source
        openSources += 1
        source.resume()
    }

    private var mayTakeRequests: Bool {
        !closed && tasks.count < LocalAPIServer.maximumRequestsInFlight && unreadReplyBytes < LocalAPIServer.maximumUnreadReplyBytes
    }

    private func readAvailable() {
        guard !closed else { return }
        var chunk = [UInt8](repeating: 0, count: 8192)
        let read = chunk.withUnsafeMutableBytes { bytes in Result { () throws(SocketError) -> Int? in try UnixSocket.read(fd, into: bytes, path: server.path) } }
        guard case .success(let count) = read else { return close() }
        guard let n = count else { return }
        if n == 0 {
            // The client finished sending; answer what it sent, then close.
            endOfInput = true
            suspendReading()
            return serveBuffered()
        }
        input.append(contentsOf: chunk[0..<n])
        serveBuffered()
    }

    /// Serves the complete lines read so far while this connection may take requests; stops
    /// reading from the socket when it may not, so unread requests stay in the kernel.
    private func serveBuffered() {
        while mayTakeRequests, let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Substring(decoding: input[..<newline], as: UTF8.self)
            input.removeSubrange(...newline)
            if !line.allSatisfy(\.isWhitespace) { server.serve(line, on: self) }
        }
        if closed { return }
        if input.count > LocalAPIServer.maximumLine && input.firstIndex(of: UInt8(ascii: "\n")) == nil {
            enqueue(AgentResponse.failure(AgentError("The request line is longer than \(LocalAPIServer.maximumLine) bytes.", code: "badRequest")).line)
            endOfInput = true
            input = []
        }
        if endOfInput {
            if tasks.isEmpty && unreadReplyBytes == 0 && input.firstIndex(of: UInt8(ascii: "\n")) == nil { close() }
            return
        }
        if mayTakeRequests { resumeReading() } else { suspendReading() }
    }

    private func suspendReading() {
        guard !readSuspended, let readSource else { return }
        readSuspended = true
        readSource.suspend()
    }

    private func resumeReading() {
        guard readSuspended, let readSource else { return }
        readSuspended = false
        readSource.resume()
    }

    /// Runs a request's work; its answer is written with ``reply(_:)`` (any thread).
    func run(_ work: @escaping @Sendable () async -> Void) {
        let id = nextTask
        nextTask += 1
        tasks[id] = Task {
            await work()
            queue.async { [self] in
                tasks[id] = nil
                serveBuffered()
            }
        }
    }

    func stream(_ events: AsyncStream<AgentEvent>) {
        run { [self] in
            for await event in events {
                // A stream reader that fell this far behind is dropped rather than buffered.
                let taken = await withCheckedContinuation { continuation in
                    queue.async { [self] in
                        guard !closed else { return continuation.resume(returning: false) }
                        guard unreadReplyBytes < LocalAPIServer.maximumUnreadReplyBytes else {
                            close()
                            return continuation.resume(returning: false)
                        }
                        enqueue(event.jsonLine)
                        continuation.resume(returning: true)
                    }
                }
                guard taken else { break }
            }
        }
    }

    /// Queues an answer line (any thread).
    func reply(_ line: String) {
        queue.async { [self] in enqueue(line) }
    }

    /// Called on the queue: appends `line` and writes what the socket takes now.
    func enqueue(_ line: String) {
        guard !closed else { return }
        output.append(contentsOf: (line + "\n").utf8)
        flush()
    }

    private func flush() {
        while outputOffset < output.count {
            let written: Int
            do {
                written = try UnixSocket.write(fd, output, from: outputOffset, path: server.path)
            } catch {
                return close()
            }
            if written == 0 { break }
            outputOffset += written
        }
        if outputOffset == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputOffset = 0
            writeSource?.cancel()
            writeSource = nil
            // Reading may have stopped for this backlog: go on, outside this call (a reply
            // written while serving must not serve the next line from inside itself).
            if readSuspended || endOfInput { queue.async { [self] in serveBuffered() } }
        } else if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [self] in flush() }
            source.setCancelHandler { [self] in sourceCancelled() }
            writeSource = source
            openSources += 1
            source.resume()
        }
    }

    /// Called on the queue; the descriptor is closed once every source on it is cancelled, so no
    /// answer ever goes to a descriptor number that by then names something else.
    func close() {
        guard !closed else { return }
        closed = true
        for task in tasks.values { task.cancel() }
        tasks = [:]
        input = []
        output = []
        outputOffset = 0
        resumeReading()
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        server.closed(fd)
    }

    private func sourceCancelled() {
        openSources -= 1
        if openSources == 0 { _ = Glibc.close(fd) }
    }
}
