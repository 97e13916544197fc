import Agent
import Foundation

// Issue 21, availability 3: the agent's local API under a flooding client and under twenty
// clients that send requests and never read the answers. Runs the real LocalAPIServer (its
// handler answers a status-sized JSON object) and the clients in one process, and prints the
// process's resident memory at each step.
//
//     swift run -c release nearplay-localapi-bench

func residentMB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

func connect(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(connected == 0, "cannot connect to \(path)")
    return fd
}

/// Sends `count` request lines on one connection from a writer thread while reading every answer.
func flood(_ path: String, count: Int) -> Int {
    let fd = connect(path)
    defer { close(fd) }
    let line = Array((AgentRequest.status.line + "\n").utf8)
    let writer = Thread {
        let block = Array([[UInt8]](repeating: line, count: 100).joined())
        for _ in 0..<(count / 100) {
            var offset = 0
            while offset < block.count {
                let n = block.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                offset += n
            }
        }
    }
    writer.start()
    var answers = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    while answers < count {
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { break }
        answers += chunk[0..<n].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
    }
    return answers
}

let folder = "/tmp/np-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let path = folder + "/agent.sock"
let answer = String(repeating: "x", count: 400)
let server = LocalAPIServer(path: path, events: { _ in AsyncStream { $0.finish() } }) { _ in
    .encoding(["state": "running", "padding": answer])
}
try server.start()
print(String(format: "started:                                 RSS %.1f MB", residentMB()))

var started = Date()
let answered = flood(path, count: 100_000)
print(String(format: "100,000 requests on one connection:      RSS %.1f MB (%d answered in %.1f s)",
             residentMB(), answered, Date().timeIntervalSince(started)))
Thread.sleep(forTimeInterval: 0.5)
print(String(format: "after that connection closed:            RSS %.1f MB; held: %@", residentMB(), "\(server.held)"))

let request = Array((AgentRequest.status.line + "\n").utf8)
let block = Array([[UInt8]](repeating: request, count: 100).joined())
var silent: [Int32] = []
for _ in 0..<20 {
    let fd = connect(path)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    silent.append(fd)
}
for _ in 0..<3 {
    for fd in silent {
        for _ in 0..<200 where block.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == block.count {}
    }
    Thread.sleep(forTimeInterval: 0.3)
}
print(String(format: "20 clients that send and never read:     RSS %.1f MB; held: %@", residentMB(), "\(server.held)"))
started = Date()
let status = try AgentClient(path: path).send(.status)
print(String(format: "a status beside them:                    %.1f ms (%d bytes)", Date().timeIntervalSince(started) * 1000, status.count))
for fd in silent { close(fd) }
Thread.sleep(forTimeInterval: 0.5)
print(String(format: "after they closed:                       RSS %.1f MB; held: %@", residentMB(), "\(server.held)"))
server.stop()
