import Agent
import BusTestSupport
import Foundation
import Testing

/// Issue 21, point 3: same-uid clients that flood the local API, or send and never read, hold a
/// bounded amount of the agent's memory and never stall its other clients.
@Suite struct LocalAPIAttackTests {
    /// A kilobyte answer, so unread answers fill socket buffers quickly.
    static let answer = String(repeating: "x", count: 1000)

    func server(_ folder: TemporaryFolder) throws -> LocalAPIServer {
        let server = LocalAPIServer(path: folder.path + "/agent.sock", events: { _ in AsyncStream { $0.finish() } }) { _ in
            .encoding(["padding": Self.answer])
        }
        try server.start()
        return server
    }

    @Test func twentyClientsThatNeverReadDoNotStallAnotherOrGrowWithoutBound() async throws {
        let folder = try TemporaryFolder()
        let server = try server(folder)
        defer { server.stop() }
        let request = Array((AgentRequest.status.line + "\n").utf8)
        // Each sends requests until the socket takes no more, and never reads an answer.
        let floods = try (0..<20).map { _ in try FloodingClient(path: server.path, line: request, lines: 20_000) }
        defer { for flood in floods { flood.close() } }
        try await Task.sleep(for: .milliseconds(500))
        for flood in floods { flood.sendMore() }
        try await Task.sleep(for: .milliseconds(200))

        let started = ContinuousClock.now
        let reply = try await blocking { try AgentClient(path: server.path).send(.status) }
        let took = ContinuousClock.now - started
        #expect(String(decoding: reply, as: UTF8.self).contains(Self.answer))
        // About 2 ms alone; before, twenty such clients made it time out. The bound leaves room for
        // a machine busy with the other suites.
        #expect(took < .seconds(5), "a status took \(took) beside twenty clients that do not read")

        let held = server.held
        #expect(held.connections >= 20)
        #expect(held.requests <= 20 * 8, "requests held: \(held.requests)")
        #expect(held.unreadReplyBytes <= 20 * (256 * 1024 + 2048), "answer bytes held: \(held.unreadReplyBytes)")
    }

    /// Before, each request left about 8 KB on its connection until it closed.
    @Test func aConnectionKeepsNothingOfTheRequestsItWasAnswered() async throws {
        let folder = try TemporaryFolder()
        let server = try server(folder)
        defer { server.stop() }
        let lines = Array(repeating: AgentRequest.status.line, count: 3_000)
        let answers = try await blocking { try rawExchange(server.path, lines, keepOpen: true) }
        #expect(answers.lines.count == lines.count)
        try await Task.sleep(for: .milliseconds(100))
        let held = server.held
        #expect(held.connections == 1, "the connection is still open")
        #expect(held.requests == 0 && held.unreadReplyBytes == 0, "held after 3,000 answered requests: \(held)")
        answers.close()
    }
}

/// A client that writes the same request line over and over without ever reading.
final class FloodingClient: Sendable {
    let fd: Int32
    let line: [UInt8]
    let lines: Int

    init(path: String, line: [UInt8], lines: Int) throws {
        fd = try connectUnix(path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.line = line
        self.lines = lines
        sendMore()
    }

    /// Writes lines until the socket takes no more (or `lines` are sent in all).
    func sendMore() {
        let block = Array([[UInt8]](repeating: line, count: 100).joined())
        for _ in 0..<(lines / 100) {
            let sent = block.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < block.count { return }
        }
    }

    func close() { _ = Glibc.close(fd) }
}

func connectUnix(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
        Glibc.close(fd)
        throw AgentError("cannot connect to \(path)")
    }
    return fd
}

/// The answers of a raw exchange on a connection left open until `close()`.
struct OpenExchange: Sendable {
    let lines: [String]
    let fd: Int32
    func close() { _ = Glibc.close(fd) }
}

/// Sends raw lines on one connection, reading answers as it goes, and leaves it open.
func rawExchange(_ path: String, _ lines: [String], keepOpen: Bool) throws -> OpenExchange {
    let fd = try connectUnix(path)
    // Generous: under the whole suite other tests can hold the task pool for seconds.
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let writer = Thread {
        let text = Array((lines.joined(separator: "\n") + "\n").utf8)
        var offset = 0
        while offset < text.count {
            let n = text.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }
    writer.start()
    var answers: [String] = []
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while answers.count < lines.count {
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { break }
        buffer.append(contentsOf: chunk[0..<n])
        var start = 0
        while let newline = buffer[start...].firstIndex(of: 10) {
            answers.append(String(decoding: buffer[start..<newline], as: UTF8.self))
            start = newline + 1
        }
        buffer.removeSubrange(0..<start)
    }
    return OpenExchange(lines: answers, fd: fd)
}
