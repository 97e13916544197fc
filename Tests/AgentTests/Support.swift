import Agent
import BeaconFrames
import BusTestSupport
import Foundation
import Glibc
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
    let process: SpawnedProcess
    let log: String

    init(_ executable: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process = try SpawnedProcess(executable, arguments, environment: environment, output: .file(log), errors: .file(log))
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits (at most `timeout` s) until the output holds `text`.
    func waitFor(_ text: String, timeout: Double = 120) -> Bool {
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
        process.signal(signal)
        if let status = process.waitBlocking(timeout: 30) { return status }
        process.kill()
        return process.status ?? -1
    }

    /// SIGKILL (and reaping, which is immediate after SIGKILL), for `defer` blocks.
    func kill() { process.kill() }
}

/// The built lobby server on 127.0.0.1, on a port of its own that survives a restart.
final class LobbyProcess: @unchecked Sendable {
    let database: String
    let port: Int
    let folder: String
    private(set) var child: ChildProcess?
    private var starts = 0

    /// A lobby on `database` (a PostgreSQL URL), or on a SQLite file in `folder` when nil.
    init(folder: String, database: String? = nil, extraArguments: [String] = []) throws {
        self.folder = folder
        self.database = database ?? folder + "/lobby.sqlite"
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

    /// SIGKILL without waiting (for `defer`).
    func kill() {
        child?.kill()
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

// MARK: - Agents as processes

/// Recorded round inputs per player (`Samples/rounds/<player>`), for the agents' `recordings`.
let roundSamples = repositoryRoot.appendingPathComponent("Samples/rounds").path

/// Writes an agent's configuration, credentials and folders under `folder/name`.
func prepareAgent(_ player: TestPlayer, in folder: String, radio: [String: Any], extra: [String: Any] = [:]) throws -> (config: String, socket: String) {
    let home = folder + "/" + player.username
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    try player.credentials.save(to: home + "/credentials.json")
    let socket = home + "/run/agent.sock"
    var object: [String: Any] = ["radio": radio, "state_directory": home + "/state", "socket": socket,
                                 "credentials": home + "/credentials.json", "notifications": false]
    for (key, value) in extra { object[key] = value }
    let config = home + "/agent.json"
    try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: config))
    return (config, socket)
}

/// A trace of `beacon` heard at `rssi` dBm, 10 times a second for `seconds`.
func writeTrace(of beacon: PlayerBeacon, rssi: Int, from start: Double, seconds: Double, path: String) throws {
    guard case let .iBeacon(uuid, major, minor)? = beacon.beaconIdentity else { throw AgentError("not an iBeacon") }
    let frame = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59)
    let ad = AdvertisingPayloadBytes.iBeacon(frame)
    // A frame that is no beacon at 0 s, so a replay starts its clock there and the beacon
    // arrives `start` seconds later.
    var lines = ["{\"nearplay_trace\":1,\"created\":\"2026-11-23T00:00:00Z\",\"source\":\"test\"}",
                 "{\"t\":0.000,\"addr\":\"C0:FF:EE:00:00:09\",\"rssi\":-80,\"ad\":\"020106\"}"]
    var t = start
    while t < start + seconds {
        lines.append(String(format: "{\"t\":%.3f,\"addr\":\"C0:FF:EE:00:00:02\",\"rssi\":%d,", t, rssi) + "\"ad\":\"\(ad)\"}")
        t += 0.1
    }
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
}

/// A trace of a location's rotating beacon as it is on the air from now on: each line carries
/// the identity of the period its time falls in (the trace's 0 s is now, as a replay started at
/// once plays it), from a new address each period.
func writeTrace(ofLocation key: LobbyBeaconKey, rssi: Int, from start: Double, seconds: Double, path: String) throws {
    guard let rotation = RotationKey(key) else { throw AgentError("not a usable beacon key") }
    let beacon = rotation.beacon(.location)
    let origin = Date()
    var lines = ["{\"nearplay_trace\":1,\"created\":\"2026-11-23T00:00:00Z\",\"source\":\"test\"}",
                 "{\"t\":0.000,\"addr\":\"C0:FF:EE:00:00:09\",\"rssi\":-80,\"ad\":\"020106\"}"]
    var t = start
    while t < start + seconds {
        let period = beacon.index(at: origin.addingTimeInterval(t))
        guard case let .iBeacon(uuid, major, minor) = beacon.beaconIdentity(period: period) else { break }
        let ad = AdvertisingPayloadBytes.iBeacon(IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59))
        let address = String(format: "C2:%02X:%02X:00:00:01", UInt8(truncatingIfNeeded: period >> 8), UInt8(truncatingIfNeeded: period))
        lines.append(String(format: "{\"t\":%.3f,\"addr\":\"\(address)\",\"rssi\":%d,", t, rssi) + "\"ad\":\"\(ad)\"}")
        t += 0.1
    }
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
}

enum AdvertisingPayloadBytes {
    /// Flags, then the iBeacon manufacturer data, as hex.
    static func iBeacon(_ frame: IBeacon) -> String {
        let manufacturer: [UInt8] = [0x4C, 0x00] + frame.manufacturerData
        let bytes: [UInt8] = [0x02, 0x01, 0x06, UInt8(manufacturer.count + 1), 0xFF] + manufacturer
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// A `nearplay agent` process under test, with its configuration, so it can be restarted on the
/// same state folder.
struct RunningAgent: Sendable {
    var player: TestPlayer
    var config: String
    var socket: String
    var process: ChildProcess
    var username: String { player.username }
    var client: AgentClient { AgentClient(path: socket) }

    /// Starts the built agent on `config`, its output in `log`.
    static func start(_ player: TestPlayer, config: String, socket: String, log: String) throws -> RunningAgent {
        let process = try ChildProcess(try builtExecutable("nearplay"), ["agent", "--config", config], log: log)
        return RunningAgent(player: player, config: config, socket: socket, process: process)
    }

    /// Writes the configuration (see ``prepareAgent(_:in:radio:extra:)``) and starts the agent.
    static func start(_ player: TestPlayer, in folder: String, radio: [String: Any], extra: [String: Any] = [:]) throws -> RunningAgent {
        let (config, socket) = try prepareAgent(player, in: folder, radio: radio, extra: extra)
        return try start(player, config: config, socket: socket, log: folder + "/\(player.username).log")
    }

    /// Another agent process on the same configuration and state (after a stop or a SIGKILL).
    func restarted(log: String) throws -> RunningAgent {
        try Self.start(player, config: config, socket: socket, log: log)
    }

    /// Sends one request off the cooperative pool.
    func send(_ request: AgentRequest) async throws -> Data {
        let client = client
        return try await blocking { try client.send(request, timeout: 60) }
    }

    func status() async throws -> AgentStatus {
        try LobbyClient.decoder.decode(AgentStatus.self, from: try await send(.status))
    }

    /// Waits until this process answers on its socket (a stale socket of a killed one does not).
    func waitUntilAnswering(timeout: Double = 60) async -> Bool {
        await eventually(timeout: timeout) {
            guard process.process.isRunning else { return false }
            return (try? await status()) != nil
        }
    }
}

/// Records an agent's `events` stream on a thread of its own, from a moment known to be after
/// the subscription: the `events` request is followed on the same connection by a `status`
/// request, which the server answers only after it has subscribed the stream.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var subscribed = false
    private var ended = false

    init(socket path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw AgentError("cannot connect to \(path)")
        }
        // Bounded: the thread ends at the latest when the agent has been silent this long.
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = AgentRequest.events().line + "\n" + AgentRequest.status.line + "\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        Thread.detachNewThread { [self] in
            var reader = LineReaderForTests(fd: fd)
            while let line = reader.next() {
                lock.withLock {
                    if line.hasPrefix("{\"ok\":") { subscribed = true } else { lines.append(line) }
                }
            }
            close(fd)
            lock.withLock { ended = true }
        }
    }

    /// Waits until the stream is known to be subscribed.
    func waitUntilSubscribed() async -> Bool {
        await eventually(timeout: 30) { lock.withLock { subscribed } }
    }

    var rawLines: [String] { lock.withLock { lines } }

    var events: [AgentEvent] {
        rawLines.compactMap { try? JSONDecoder().decode(AgentEvent.self, from: Data($0.utf8)) }
    }
}

/// Lines from a blocking socket (the tests' own, so they do not lean on the agent's internals).
struct LineReaderForTests {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Every event the lobby holds for `client`'s player after `cursor` (`GET /v1/events`, page by page).
func lobbyEvents(_ client: LobbyClient, after cursor: Int64 = 0) async throws -> [LobbyEvent] {
    var all: [LobbyEvent] = []
    var after = cursor
    while true {
        let page = try await client.events(after: after, limit: 100)
        all += page.events
        if page.events.isEmpty || page.next <= after { return all }
        after = page.next
    }
}

extension LobbyEvent {
    /// The agent event the lobby event becomes (`gameStarted` → `game_started`).
    var agentKind: AgentEvent.Kind? {
        let snake = kind.reduce(into: "") { text, character in
            if character.isUppercase { text += "_" + character.lowercased() } else { text.append(character) }
        }
        return AgentEvent.Kind(rawValue: snake)
    }
}

// MARK: - A game between two agents

/// Waits until `agent` lists `username` among the players nearby.
func sees(_ agent: RunningAgent, _ username: String, timeout: Double = 60) async -> Bool {
    await eventually(timeout: timeout) {
        let nearby = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: try await agent.send(.nearby))
        return nearby?.contains { $0.username == username } == true
    }
}

/// `inviter` invites `invitee` through its agent; the invitee's agent lists the invitation and
/// accepts it. Returns the invitation, its game now open.
func inviteAndAccept(_ inviter: RunningAgent, _ invitee: RunningAgent) async throws -> Invitation {
    let invitation = try LobbyClient.decoder.decode(Invitation.self, from: try await inviter.send(.invite(players: [invitee.username])))
    #expect(invitation.invitees.map(\.username) == [invitee.username])
    // The invitee's agent learns of it over the lobby's event stream and lists it.
    #expect(await eventually {
        let pending = try? LobbyClient.decoder.decode([Invitation].self, from: try await invitee.send(.invitations))
        return pending?.contains { $0.id == invitation.id } == true
    })
    let accepted = try LobbyClient.decoder.decode(Invitation.self, from: try await invitee.send(.accept(invitation: invitation.id)))
    #expect(accepted.state == .open)
    return invitation
}

/// Each agent plays its next round of `game`, `rounds` times in turn; the scores `play` reported,
/// by player and round.
func playRounds(_ game: Int64, _ agents: [RunningAgent], rounds: Int = 3) async throws -> [String: [Int: Int]] {
    var reported: [String: [Int: Int]] = [:]
    for _ in 1...rounds {
        for agent in agents {
            let report = try LobbyClient.decoder.decode(RoundReport.self, from: try await agent.send(.play(game: game)))
            #expect(report.game == game)
            #expect(reported[agent.username]?[report.round] == nil, "round \(report.round) played twice by \(agent.username)")
            reported[agent.username, default: [:]][report.round] = report.score
        }
    }
    return reported
}

/// Waits for `game` to finish at the lobby, then checks every round holds exactly the scores the
/// agents reported, both agents see the same end, the winner unlocked the loser (a draw: both),
/// and both queues are empty.
@discardableResult
func expectFinished(_ game: Int64, reported: [String: [Int: Int]], _ a: RunningAgent, _ b: RunningAgent,
                    timeout: Double = 60) async throws -> LobbyGame {
    var finished: LobbyGame?
    #expect(await eventually(timeout: timeout) {
        finished = try? await a.player.client.game(game)
        return finished?.state == .finished
    }, "the game did not finish: \(a.process.output)\n\(b.process.output)")
    let final = try #require(finished)
    #expect(final.rounds.count == reported[a.username]?.count)
    for round in final.rounds {
        #expect(round.scores.keys.sorted() == [a.username, b.username].sorted(), "round \(round.n): \(round.scores)")
        #expect(round.scores[a.username] == reported[a.username]?[round.n])
        #expect(round.scores[b.username] == reported[b.username]?[round.n])
    }
    // Both agents see the same end.
    for agent in [a, b] {
        let view = try LobbyClient.decoder.decode([LobbyGame].self, from: try await agent.send(.games)).first { $0.id == game }
        #expect(view?.state == .finished)
        #expect(view?.winner == final.winner)
    }
    // The winner unlocked the loser; a draw unlocks both.
    let unlockedByA = try LobbyClient.decoder.decode([UnlockedPlayer].self, from: try await a.send(.unlocked)).map(\.username)
    let unlockedByB = try LobbyClient.decoder.decode([UnlockedPlayer].self, from: try await b.send(.unlocked)).map(\.username)
    switch final.winner {
    case a.username?: #expect(unlockedByA == [b.username])
    case b.username?: #expect(unlockedByB == [a.username])
    default: #expect(unlockedByA == [b.username] && unlockedByB == [a.username])
    }
    // The queues are empty: everything arrived.
    for agent in [a, b] {
        #expect(await eventually { ((try? await agent.status())?.queued ?? 1) == 0 }, "\(agent.username)'s queue did not empty")
    }
    return final
}

/// A device standing still on the simulated air, with its radio's offsets (dB).
struct StillDevice {
    var name: String
    var x: Double
    var y: Double
    var transmit = 0.0
    var receive = 0.0
}

/// The `nearplay air` scenario of devices standing still in a room of `exponent`, no loss.
func stillAirScenario(exponent: Double, sigma: Double = 1, seed: Int, _ devices: [StillDevice]) -> String {
    let entries = devices.map { device in
        #""\#(device.name)": {"waypoints": [[0, \#(device.x), \#(device.y)]], "txOffset": \#(device.transmit), "rxOffset": \#(device.receive)}"#
    }
    return #"{"exponent": \#(exponent), "sigma": \#(sigma), "loss": 0.0, "seed": \#(seed), "devices": {"# + entries.joined(separator: ", ") + "}}"
}
