import Foundation
import Spawn

/// A child process with its output in a file, killed when the value goes away.
final class ChildProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let log: String

    init(_ executable: String, _ arguments: [String], log: String) throws {
        self.log = log
        FileManager.default.createFile(atPath: log, contents: nil)
        process = try SpawnedProcess(executable, arguments, output: .file(log), errors: .file(log))
    }

    var pid: Int32 { process.pid }
    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits (at most `timeout` s) until `condition` holds; false if the process ended first.
    func waitUntil(timeout: Double = 30, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            if !process.isRunning { return condition() }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    func waitFor(_ text: String, timeout: Double = 30) -> Bool { waitUntil(timeout: timeout) { output.contains(text) } }

    /// SIGTERM, then SIGKILL after 10 s.
    func stop() {
        process.signal(SIGTERM)
        process.waitBlocking(timeout: 10)
        process.kill()
    }
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
    guard ok else { throw BenchFailure("no free TCP port on 127.0.0.1") }
    return Int(UInt16(bigEndian: address.sin_port))
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// User + system CPU seconds of a process (all its threads), from /proc/PID/stat fields 14 and 15.
func cpuSeconds(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Resident set size in MB (VmRSS of /proc/PID/status).
func residentMegabytes(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
    return kilobytes / 1024
}

/// The 1-minute load average.
func loadAverage() -> Double {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return Double(text.split(separator: " ").first ?? "") ?? .nan
}

/// "Intel(R) Xeon(R) … (2 cores)", for the report.
func machineDescription() -> String {
    let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?" } ?? "unknown CPU"
    return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores online"
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
    var milliseconds: Double { seconds * 1000 }
}

/// Median, 95th percentile and maximum of `values` (nearest rank).
struct Summary {
    var median: Double
    var p95: Double
    var max: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        func rank(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = Int((q * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        median = rank(0.5)
        p95 = rank(0.95)
        max = sorted.last ?? .nan
    }
}
