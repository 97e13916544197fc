import DBus
import Foundation

/// A private `dbus-daemon` in a temporary folder, for tests and benchmarks that need a real bus
/// without touching the machine's own. Stopped by ``stop()`` or when dropped.
public final class PrivateBus: @unchecked Sendable {
    /// The address clients connect to, e.g. `unix:path=/tmp/…/bus`.
    public let address: String
    public let directory: URL
    private var daemon: SpawnedProcess?
    private let executable: String
    private let socket: String
    private let config: URL

    /// Lets every connection own any name and send anything: a bus for testing clients.
    public static let openPolicy = """
        <policy context="default">
          <allow send_destination="*" eavesdrop="true"/>
          <allow eavesdrop="true"/>
          <allow own="*"/>
        </policy>
        """

    /// Starts the daemon and waits until it accepts connections. `defaultPolicy`: the policy
    /// elements of its configuration; `includes`: configuration files the daemon loads too (a
    /// D-Bus policy to check, say). A configuration it refuses stops it starting, and the error
    /// thrown carries the daemon's reason.
    /// It waits without holding a thread: a daemon slow to start on a loaded machine must not
    /// stall the other tests sharing the two-thread cooperative pool.
    public init(defaultPolicy: String = PrivateBus.openPolicy, includes: [String] = []) async throws {
        guard let executable = findExecutable("dbus-daemon") else {
            throw TestEnvironmentError("dbus-daemon is not installed: run scripts/bootstrap")
        }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("nearplay-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("bus").path
        config = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
            \(defaultPolicy)
            \(includes.map { "  <include>\($0)</include>" }.joined(separator: "\n"))
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        address = "unix:path=\(socket)"
        self.executable = executable
        try await launch()
    }

    private func launch() async throws {
        // --print-address writes the address once the daemon accepts connections (the socket
        // file exists a moment earlier, when connecting is still refused). Its complaints on
        // stderr (it may not raise its fd limit when not root; users and groups of included
        // policies that this machine lacks) are kept for the errors.
        let daemon = try SpawnedProcess(executable, ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"])
        self.daemon = daemon
        let deadline = Date().addingTimeInterval(30)
        while !daemon.standardOutput.contains("\n") && daemon.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard daemon.standardOutput.contains("\n") else {
            daemon.kill()
            _ = daemon.waitBlocking(timeout: 2)
            let output = daemon.standardError
            stop()
            throw TestEnvironmentError("dbus-daemon did not start (config \(config.path)): \(output)")
        }
    }

    /// Kills the daemon, dropping every connection, and starts a new one at the same address.
    public func restart() async throws {
        daemon?.kill()
        try? FileManager.default.removeItem(atPath: socket)
        try await launch()
    }

    deinit { stop() }

    public func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(address: address)
    }

    public func stop() {
        daemon?.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The program `name` of the test venv (`NEARPLAY_VENV`, else `<repository>/.venv`), which
/// scripts/bootstrap fills; throws saying so when it is not installed there.
public func testVenvProgram(_ name: String) throws -> String {
    let venv = ProcessInfo.processInfo.environment["NEARPLAY_VENV"] ?? repositoryRoot.appendingPathComponent(".venv").path
    let program = venv + "/bin/" + name
    guard FileManager.default.isExecutableFile(atPath: program) else {
        throw TestEnvironmentError("\(name) is not installed in \(venv): run scripts/bootstrap")
    }
    return program
}

/// Something a test needs is missing from the machine; says how to get it.
public struct TestEnvironmentError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") + ["/usr/bin", "/bin", "/usr/sbin"] {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// The repository root, found from this source file's location.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
