import Agent
import Foundation
import LobbyClient
import Testing

/// The folder the built executables are in (next to the test bundle).
func builtExecutable(_ name: String) throws -> String {
    let folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent(),
                   Bundle.main.bundleURL]
    for folder in folders {
        let candidate = folder.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    Issue.record("\(name) is not built next to the tests (looked in \(folders.map(\.path))): run `swift build --build-tests` (or scripts/test) first.")
    throw AgentError("\(name) is not built")
}

/// A free TCP port on 127.0.0.1 (bound and released; the lobby takes it right after).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard ok else { throw AgentError("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A child process with its output in a file, killed when the value goes away.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    let log: String

    init(_ executable: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws {
        self.log = log
        FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits (at most `timeout` s) until the output holds `text`.
    func waitFor(_ text: String, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Sends `signal` and waits (at most 30 s) for the end; returns the exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        return process.terminationStatus
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

/// The built lobby server on 127.0.0.1, on a port of its own that survives a restart.
final class LobbyProcess: @unchecked Sendable {
    let database: String
    let port: Int
    let folder: String
    private(set) var child: ChildProcess?
    private var starts = 0

    init(folder: String, extraArguments: [String] = []) throws {
        self.folder = folder
        database = folder + "/lobby.sqlite"
        port = try freePort()
        self.extraArguments = extraArguments
        try start()
    }

    private let extraArguments: [String]

    var url: String { "http://127.0.0.1:\(port)" }

    func start() throws {
        starts += 1
        let child = try ChildProcess(try builtExecutable("nearplay-lobby"),
                                     ["serve", "--db", database, "--port", String(port), "--bcrypt-cost", "4"] + extraArguments,
                                     log: folder + "/lobby-\(starts).log")
        guard child.waitFor("lobby listening on") else {
            Issue.record("The lobby did not start: \(child.output)")
            throw AgentError("lobby did not start")
        }
        self.child = child
    }

    func stop(signal: Int32 = SIGTERM) {
        child?.stop(signal: signal)
        child = nil
    }
}

/// A registered, logged-in player.
struct TestPlayer: Sendable {
    var username: String
    var client: LobbyClient
    var beacon: PlayerBeacon
    var credentials: Credentials
}

func register(_ username: String, at lobby: String) async throws -> TestPlayer {
    let base = LobbyClient(baseURL: lobby)
    let profile = try await base.register(username: username, firstName: username.capitalized, lastName: "Tester",
                                          email: "\(username)@example.org", password: "password-123")
    let token = try await base.logIn(username: username, password: "password-123").token
    return TestPlayer(username: username, client: base.authenticated(token), beacon: profile.beacon,
                      credentials: Credentials(lobby: lobby, username: username, token: token))
}

/// Polls `condition` until it holds or `timeout` seconds pass.
func eventually(timeout: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
