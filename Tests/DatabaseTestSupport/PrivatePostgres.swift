import BusTestSupport
import Foundation
import Glibc

/// A PostgreSQL cluster of its own in a temporary folder, for tests and benchmarks: made with
/// `initdb`, served by `postgres` on a free port of 127.0.0.1 (and a socket in its folder), and
/// stopped when the process ends. PostgreSQL refuses to run as root, so under root (as in CI) the
/// cluster belongs to `nobody` and its programs run as that user.
///
/// One cluster serves a whole test run (`initdb` takes seconds); each test takes a database of
/// its own from it (``createDatabase()``).
public final class PrivatePostgres: Sendable {
    public let directory: String
    public let port: Int
    /// The superuser the cluster was made with; it connects without a password.
    public let user = "nearplay"
    let binaries: String
    private let server: SpawnedProcess
    private let runAs: [String]

    /// The cluster the test run shares, started by the first caller.
    public static func shared() async throws -> PrivatePostgres {
        try await SharedCluster.instance.cluster()
    }

    /// Makes and starts a new cluster; throws saying what to install when PostgreSQL is missing.
    public init() async throws {
        guard let binaries = Self.findBinaries() else {
            throw TestEnvironmentError(
                "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/bootstrap, or apt-get install postgresql-15")
        }
        self.binaries = binaries
        let directory = "/tmp/nearplay-pg-\(UUID().uuidString.prefix(8))"
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        var runAs: [String] = []
        if geteuid() == 0 {
            guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
                throw TestEnvironmentError("setpriv (util-linux) is missing: it runs PostgreSQL as nobody under root; apt-get install util-linux")
            }
            for path in [directory, directory + "/data"] { chown(path, 65534, 65534) }
            runAs = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        }
        self.runAs = runAs
        chmod(directory + "/data", 0o700)

        /// `program` of the cluster's binaries, run as the cluster's owner.
        func command(_ program: String, _ arguments: [String]) throws -> SpawnedProcess {
            let line = runAs + [binaries + "/" + program] + arguments
            return try SpawnedProcess(line[0], Array(line.dropFirst()))
        }
        let initdb = try command("initdb", [
            "-D", directory + "/data", "-U", user, "--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C",
        ])
        let made = await initdb.finish()
        guard made.status == 0 else {
            throw TestEnvironmentError("initdb failed (exit \(made.status)): \(made.stderr.suffix(800))")
        }

        // A free port: what the kernel hands out for port 0 is free a moment later too, almost
        // always; a clash shows as "could not bind" and the next try takes another.
        var lastError = ""
        for _ in 0..<5 {
            let port = Self.freePort()
            let server = try command("postgres", [
                "-D", directory + "/data", "-p", String(port), "-k", directory, "-c", "listen_addresses=127.0.0.1",
                // A test cluster: nothing here must survive a power loss.
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                "-c", "max_connections=2000", "-c", "shared_buffers=64MB", "-c", "log_min_messages=warning",
                "-c", "max_locks_per_transaction=128", "-c", "max_pred_locks_per_transaction=256",
            ])
            let ready = await server.waitForOutput(timeout: 60) { $0.contains("ready to accept connections") }
            if ready {
                self.port = port
                self.server = server
                return
            }
            lastError = server.standardError
            server.kill()
            guard lastError.contains("could not bind") || lastError.contains("Address already in use") else { break }
        }
        throw TestEnvironmentError("PostgreSQL did not start in \(directory): \(lastError.suffix(800))")
    }

    /// A URL for `database` on this cluster, as `nearplay lobby serve --database` takes it.
    public func url(database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// A new, empty database; answers its URL.
    public func createDatabase(_ name: String = "test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))") async throws -> String {
        let create = try SpawnedProcess(binaries + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", user, name])
        let result = await create.finish()
        guard result.status == 0 else { throw TestEnvironmentError("createdb \(name) failed: \(result.stderr)") }
        return url(database: name)
    }

    /// Runs `sql` with psql in `database` and returns what it printed (unaligned, tuples only).
    public func psql(_ database: String, _ sql: String) async throws -> String {
        let run = try SpawnedProcess(binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", user, "-d", database,
                                                       "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        let result = await run.finish()
        guard result.status == 0 else { throw TestEnvironmentError("psql failed: \(result.stderr)") }
        return result.stdout
    }

    /// Fast shutdown (SIGINT: sessions end, the cluster closes cleanly), then the folder goes.
    public func stop() {
        if server.isRunning {
            server.signal(SIGINT)
            if server.waitBlocking(timeout: 10) == nil { server.kill() }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether the server process still runs.
    public var isRunning: Bool { server.isRunning }

    /// The newest `/usr/lib/postgresql/N/bin` with initdb in it.
    static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    static func freePort() -> Int { freeLoopbackPort() }
}

/// Starts the shared cluster once and stops it when the process exits.
private actor SharedCluster {
    static let instance = SharedCluster()
    private var starting: Task<PrivatePostgres, any Error>?

    func cluster() async throws -> PrivatePostgres {
        if let starting { return try await starting.value }
        let task = Task { () throws -> PrivatePostgres in
            let cluster = try await PrivatePostgres()
            SharedClusterStopper.cluster.withLock { $0 = cluster }
            atexit { SharedClusterStopper.cluster.withLock { $0?.stop() } }
            return cluster
        }
        starting = task
        return try await task.value
    }
}

import Synchronization

private enum SharedClusterStopper {
    static let cluster = Mutex<PrivatePostgres?>(nil)
}
