import Foundation
import Radio

/// The CLI's side of the local API: connects to the agent's socket, sends one request, reads
/// the answer (or, for `events`, every line until the agent goes away).
public struct AgentClient: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Sends `request` and returns the result's JSON; an error response is thrown.
    public func send(_ request: AgentRequest, timeout: Double = 60) throws(AgentError) -> Data {
        let fd = try connect()
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var reader = LineReader(fd: fd, path: path)
        guard write(request, to: fd) else {
            throw Self.refusal(&reader) ?? AgentError("The agent on \(path) hung up before the request was sent.", code: "agentNotRunning")
        }
        guard let line = reader.next() else {
            throw AgentError("The agent on \(path) did not answer within \(Int(timeout)) s.", code: "agentNotRunning")
        }
        switch try AgentResponse(line: line) {
        case .result(let data): return data
        case .failure(let error): throw error
        }
    }

    /// ``send(_:timeout:)`` from async code: the blocking socket calls run on a thread of their
    /// own, never on the cooperative pool.
    public func request(_ request: AgentRequest, timeout: Double = 60) async throws(AgentError) -> Data {
        let result: Result<Data, AgentError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: Result { () throws(AgentError) -> Data in try self.send(request, timeout: timeout) })
            }
        }
        return try result.get()
    }

    /// Streams the agent's last `recent` events, then every new one, to `body` until it returns
    /// false or the agent goes away (or,
    /// with `idleTimeout`, stays silent that many seconds).
    public func events(recent: Int = 0, idleTimeout: Int? = nil, _ body: (String) -> Bool) throws(AgentError) {
        let fd = try connect()
        defer { close(fd) }
        if let idleTimeout {
            var limit = timeval(tv_sec: idleTimeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var reader = LineReader(fd: fd, path: path)
        guard write(.events(recent: recent), to: fd) else {
            throw Self.refusal(&reader) ?? AgentError("The agent on \(path) hung up.", code: "agentNotRunning")
        }
        while let line = reader.next() {
            if line.hasPrefix("{\"ok\":false"), case .failure(let error) = try AgentResponse(line: line) { throw error }
            if !body(line) { return }
        }
    }
}

extension AgentClient {
    /// A blocking connection to the agent, or why there is none, said for the person at the terminal.
    func connect() throws(AgentError) -> Int32 {
        do {
            return try UnixSocket.connect(path: path, blocking: true)
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

    /// Sends one request line; false when the agent hung up.
    func write(_ request: AgentRequest, to fd: Int32) -> Bool {
        (try? UnixSocket.writeAll(fd, Array((request.line + "\n").utf8), path: path)) != nil
    }

    /// What an agent that hung up before reading the request said first: it refuses another
    /// user's connection by writing the error and closing at once, so the client's write can
    /// fail (EPIPE) with the refusal already waiting to be read.
    static func refusal(_ reader: inout LineReader) -> AgentError? {
        guard let line = reader.next(), case .failure(let error)? = try? AgentResponse(line: line) else { return nil }
        return error
    }
}

/// Lines from a blocking socket; nil at its end, on an error, or when its receive timeout passes.
struct LineReader {
    let fd: Int32
    let path: String
    private var buffer: [UInt8] = []

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let read = chunk.withUnsafeMutableBytes { bytes in try? UnixSocket.read(fd, into: bytes, path: path) }
            guard let count = read ?? nil, count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
