import Foundation
import Glibc
import Radio
import Testing

/// The Unix stream sockets of the simulated air and the agent's local API.
@Suite struct UnixSocketTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("npsock-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The file appears only once the socket listens (bound beside it under a temporary name,
    /// then linked): whoever sees it can connect, and nothing temporary is left behind.
    @Test func theSocketFileAppearsListeningWithItsModeAndNothingElse() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sock"
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        defer { close(listener) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["agent.sock"])
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o600)
        let client = try UnixSocket.connect(path: path)
        close(client)
    }

    @Test func refusesAPathAnotherListenerHolds() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/air.sock"
        let first = try UnixSocket.listen(path: path)
        defer { close(first) }
        let error = #expect(throws: SocketError.self) { _ = try UnixSocket.listen(path: path) }
        #expect(error?.code == EADDRINUSE)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["air.sock"])
    }
}
