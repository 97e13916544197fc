// A slow WebSocket client under a flood of events (issue 21, availability 4). A live lobby on
// 127.0.0.1 (the real server, default live buffer of 1,024 events) and one player's event stream
// opened with the WebSocket client the agent uses; EVENTS events (120,000 by default) are
// committed for that player in transactions of 1,000 while the client reads them slowly (it
// pauses 10 ms every 100 events, so the socket backs up and the lobby's buffer overflows again
// and again). Prints how many arrived, lost, repeated and out of order, the time, and the
// process's peak resident memory; exits 1 when any event was lost or repeated. Usage:
//   swift build -c release --product nearplay-event-flood && .build/release/nearplay-event-flood [events]
import Foundation
import Hummingbird
import HummingbirdWSClient
@_spi(Benchmarks) import Lobby
import LobbyServer
import Logging
import Synchronization

let total = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 120_000
let batch = 1000

func peakResidentMB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("event-flood-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let store = try LobbyStore(path: folder.appendingPathComponent("lobby.sqlite").path, configuration: LobbyConfiguration(bcryptCost: 4))
_ = try await store.register(Registration(username: "bob", firstName: "B", lastName: "F", email: "bob@example.org", password: "password-123"))
let token = try await store.logIn(username: "bob", password: "password-123").token
let bob = try await store.authenticate(token: token)

var logger = Logger(label: "event-flood")
// The server's own shutdown (cancelled at the end) logs errors that say nothing about the run.
logger.logLevel = .critical
let port = Mutex<Int?>(nil)
let application = buildLobbyApplication(store: store, host: "127.0.0.1", port: 0, logger: logger) { bound in port.withLock { $0 = bound } }

let started = ContinuousClock.now
let flooded = Mutex<Duration?>(nil)
var cursors: [Int64] = []
try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await application.runService(gracefulShutdownSignals: []) }
    while port.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
    let url = "ws://127.0.0.1:\(port.withLock { $0 }!)/v1/events/live?after=0"
    var configuration = WebSocketClientConfiguration()
    configuration.additionalHeaders[.authorization] = "Bearer \(token)"
    let received = Mutex<[Int64]>([])
    _ = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
        let flood = Task {
            for first in stride(from: 0, to: total, by: batch) {
                try await store.benchmarkRecordEvents(for: bob, count: min(batch, total - first), startingAt: first)
            }
            flooded.withLock { $0 = ContinuousClock.now - started }
        }
        var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
        var count = 0
        while count < total, case .text(let text) = try await messages.next() {
            let event = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            received.withLock { $0.append((event?["cursor"] as? NSNumber)?.int64Value ?? -1) }
            count += 1
            if count % 100 == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        try await flood.value
        try await outbound.close(.normalClosure, reason: nil)
    }
    cursors = received.withLock { $0 }
    group.cancelAll()
}
let elapsed = ContinuousClock.now - started
let distinct = Set(cursors).count
let lost = total - distinct
let repeated = cursors.count - distinct
let ordered = zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }
print("events committed: \(total) (transactions of \(batch)); live buffer: \(store.events.bufferSize)")
print("received: \(cursors.count), lost: \(lost), repeated: \(repeated), in order: \(ordered)")
func seconds(_ duration: Duration) -> Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }
print(String(format: "all committed after %.1f s, all read after %.1f s; peak resident memory: %.0f MB",
             seconds(flooded.withLock { $0 } ?? .zero), seconds(elapsed), peakResidentMB()))
try store.close()
exit(lost == 0 && repeated == 0 && ordered ? 0 : 1)
