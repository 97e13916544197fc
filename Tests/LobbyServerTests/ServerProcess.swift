import BusTestSupport
import Foundation
import Testing

/// The built `nearplay lobby serve` running as a child process, for tests that must kill it.
final class ServerProcess: @unchecked Sendable {
    private(set) var process: SpawnedProcess!
    let output: URL
    private(set) var port = 0

    /// The `nearplay` executable built next to the test bundle.
    static func executable() throws -> URL {
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent()]
        folders.append(Bundle.main.bundleURL)
        for folder in folders {
            let candidate = folder.appendingPathComponent("nearplay")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        Issue.record("The nearplay executable is not built next to the tests (looked in \(folders.map(\.path))): run `swift build --build-tests` (or scripts/test) first.")
        throw CocoaError(.fileNoSuchFile)
    }

    /// Starts the server on `database` and waits until it listens (polling, so no thread of the
    /// task pool is held while it starts).
    init(database: String, folder: URL, arguments: [String] = []) async throws {
        output = folder.appendingPathComponent("server-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = try SpawnedProcess(try Self.executable().path,
                                     ["lobby", "serve", "--db", database, "--port", "0", "--bcrypt-cost", "4"] + arguments,
                                     output: .file(output.path), errors: .file(output.path))
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("lobby listening on http://") }),
               let port = Int(line.split(separator: ":").last ?? "") {
                self.port = port
                return
            }
            guard process.isRunning else { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        await stop(signal: SIGKILL)
        Issue.record("The lobby server did not start: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
        throw CocoaError(.executableLoad)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Sends `signal` and waits (at most 30 s) for the process to end; returns its exit status.
    @discardableResult
    func stop(signal: Int32) async -> Int32 {
        process.signal(signal)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let status = process.status { return status }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.kill()
        return process.status ?? -1
    }
}
