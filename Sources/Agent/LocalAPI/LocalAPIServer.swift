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
        for connection in connections { connection.close() }
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
            let connection = Connection(fd: fd, server: self)
            lock.withLock { state.connections[fd] = connection }
            connection.start(on: queue)
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
            connection.write(AgentResponse.failure(error).line)
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
            connection.write(response.line)
        }
    }
}

/// One client of the local API.
private final class Connection: @unchecked Sendable {
    let fd: Int32
    private unowned let server: LocalAPIServer
    // Guarded by `lock`.
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var source: (any DispatchSourceRead)?
    private var tasks: [Task<Void, Never>] = []
    private var closed = false
    /// One reply written at a time.
    private let writeLock = NSLock()

    init(fd: Int32, server: LocalAPIServer) {
        self.fd = fd
        self.server = server
    }

    func start(on queue: DispatchQueue) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self] in readAvailable() }
        // Closed under the write lock, after ``close()`` marked the connection closed: a reply
        // being written finishes first, and none is written after, so no reply ever goes to a
        // descriptor number that by then names something else in this process.
        source.setCancelHandler { [fd, writeLock] in writeLock.withLock { _ = Glibc.close(fd) } }
        lock.withLock { self.source = source }
        source.resume()
    }

    private func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 8192)
        let read = chunk.withUnsafeMutableBytes { bytes in Result { () throws(SocketError) -> Int? in try UnixSocket.read(fd, into: bytes, path: server.path) } }
        guard case .success(let count) = read, count != 0 else {
            close()
            return
        }
        guard let n = count else { return }
        var lines: [Substring] = []
        let overflow = lock.withLock { () -> Bool in
            buffer.append(contentsOf: chunk[0..<n])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(Substring(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            return buffer.count > LocalAPIServer.maximumLine
        }
        for line in lines where !line.allSatisfy(\.isWhitespace) { server.serve(line, on: self) }
        if overflow {
            write(AgentResponse.failure(AgentError("The request line is longer than \(LocalAPIServer.maximumLine) bytes.", code: "badRequest")).line)
            close()
        }
    }

    func run(_ work: @escaping @Sendable () async -> Void) {
        let task = Task { await work() }
        lock.withLock { tasks.append(task) }
    }

    func stream(_ events: AsyncStream<AgentEvent>) {
        run { [self] in
            for await event in events {
                guard write(event.jsonLine) else { break }
            }
        }
    }

    @discardableResult
    func write(_ line: String) -> Bool {
        // A reader too slow to take a reply within 2 s is dropped rather than stalling the agent.
        let written = writeLock.withLock { () -> Bool? in
            if lock.withLock({ closed }) { return nil }
            return (try? UnixSocket.writeAll(fd, Array((line + "\n").utf8), path: server.path)) != nil
        }
        guard let written else { return false }
        if !written { close() }
        return written
    }

    func close() {
        let (source, tasks) = lock.withLock { () -> ((any DispatchSourceRead)?, [Task<Void, Never>]) in
            guard !closed else { return (nil, []) }
            closed = true
            defer { self.source = nil; self.tasks = [] }
            return (self.source, self.tasks)
        }
        for task in tasks { task.cancel() }
        source?.cancel()
        server.closed(fd)
    }
}
