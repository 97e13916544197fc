import Agent
import Foundation
import LobbyClient
import Spawn

/// Everything `nearplay demo` starts: a lobby on a temporary SQLite file, a simulated air, and
/// one agent per player, each a child process with its log in a temporary folder, started as the
/// tests start theirs (``SpawnedProcess``: its own process group, only its standard streams
/// inherited). ``stop()`` ends them all (SIGTERM, then SIGKILL after 5 s) and removes the folder;
/// it is also what an interrupt runs, so nothing is left behind.
final class DemoWorld: @unchecked Sendable {
    let folder: String
    let binaries: String
    private let lock = NSLock()
    private var children: [(name: String, process: SpawnedProcess)] = []
    private var stopped = false

    init(binaries: String) throws {
        var template = Array("/tmp/nearplay-demo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("Cannot make a temporary folder in /tmp: \(String(cString: strerror(errno))).")
        }
        folder = String(cString: made)
        self.binaries = binaries
    }

    /// Starts `executable arguments…`, its output in `folder/name.log`, and waits (up to
    /// `timeout` s) for a line that starts with `ready`; returns that line.
    @discardableResult
    func start(_ name: String, _ executable: String, _ arguments: [String], ready: String?, timeout: Double = 30) throws -> String? {
        let log = folder + "/\(name).log"
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess(binaries + "/" + executable, arguments, output: .file(log), errors: .file(log))
        } catch {
            throw CommandFailure("Cannot start \(binaries)/\(executable): \(error). Build it first (`swift build`).")
        }
        lock.withLock { children.append((name, process)) }
        guard let ready else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(ready) }) { return String(line) }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw CommandFailure("The demo's \(name) did not start: \(text.suffix(800))")
    }

    /// Whether the child called `name` still runs.
    func isRunning(_ name: String) -> Bool {
        lock.withLock { children.first { $0.name == name }?.process.isRunning ?? false }
    }

    /// The last lines of a child's log, for error messages.
    func log(of name: String) -> String {
        String(((try? String(contentsOfFile: folder + "/\(name).log", encoding: .utf8)) ?? "").suffix(1200))
    }

    /// Stops every child (newest first) and removes the folder. Safe to call twice, and from a
    /// signal handler's queue.
    func stop() {
        let running: [(name: String, process: SpawnedProcess)] = lock.withLock {
            guard !stopped else { return [] }
            stopped = true
            return children.reversed()
        }
        for child in running { child.process.signal(SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        for child in running {
            _ = child.process.waitBlocking(timeout: max(0, deadline.timeIntervalSinceNow))
            child.process.kill()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Registers a player at the lobby and writes their agent's credentials and configuration.
    func makePlayer(_ username: String, firstName: String, lastName: String, lobby: String, airSocket: String,
                    recordings: String?) async throws -> (config: String, socket: String) {
        let client = LobbyClient(baseURL: lobby)
        let password = "demo-\(username)-password"
        do {
            _ = try await client.register(username: username, firstName: firstName, lastName: lastName,
                                          email: "\(username)@demo.invalid", password: password)
            let token = try await client.logIn(username: username, password: password).token
            let home = folder + "/\(username)"
            try Credentials(lobby: lobby, username: username, token: token).save(to: home + "/credentials.json")
            let socket = home + "/agent.sock"
            var configuration = AgentConfiguration()
            configuration.lobby = lobby
            configuration.radio = .init(backend: .sim, airSocket: airSocket, device: username)
            configuration.stateDirectory = home + "/state"
            configuration.socket = socket
            configuration.credentials = home + "/credentials.json"
            configuration.notifications = false
            configuration.encounterReportSeconds = 5
            configuration.recordings = recordings
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let path = home + "/agent.json"
            try encoder.encode(configuration).write(to: URL(fileURLWithPath: path))
            return (path, socket)
        } catch let error as AgentError {
            throw CommandFailure(error.message)
        } catch let error as LobbyClientError {
            throw CommandFailure("The demo lobby refused \(username): \(error.message)")
        }
    }
}
