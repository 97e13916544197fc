import Foundation
import Glibc

/// A child process, started with `posix_spawn` and waited for with `waitpid(pid, WNOHANG)`,
/// never with Foundation's `Process`: the one way Nearplay starts programs (the tests, the
/// benchmarks and `nearplay demo`).
///
/// Foundation's `Process` on Linux learns that a child ended from a socket pair the child
/// inherits: when its end reads as closed, a single manager thread calls a *blocking*
/// `waitpid` for that child. The test process opens and closes hundreds of descriptors on many
/// threads at once; should any of them ever touch that socket, or a child inherit another
/// child's end, the manager thread blocks in `waitpid` for a child that is still running, and
/// from then on no `Process` anywhere in the test run learns that its child exited. That is how
/// the whole suite once hung for 90 minutes. Here each child is polled on its own pid, nothing is
/// shared, and a child inherits only its standard streams (every other descriptor is closed
/// in it), an empty signal mask and default signal handlers (the test runner's threads block
/// SIGTERM, which a child would otherwise inherit).
public final class SpawnedProcess: @unchecked Sendable {
    /// Where a child's standard output or error goes.
    public enum Stream: Sendable {
        /// Kept in memory, readable at any time (``standardOutput``, ``standardError``).
        case capture
        /// Appended to a file.
        case file(String)
        case null
        /// This process's descriptor (a pipe it reads itself with blocking reads, or its own
        /// standard error to pass it on), duplicated into the child; the caller keeps it.
        case descriptor(Int32)
    }

    public let pid: pid_t
    public let executable: String

    private let lock = NSLock()
    private var waitStatus: Int32?
    private let output: Collector?
    private let errors: Collector?
    /// The write end of its standard input, when it was given a pipe.
    private var input: Int32?

    /// Starts `executable` (a path) with `arguments`, this process's environment with
    /// `environment` added (or exactly `replacingEnvironment`), standard input from /dev/null (or,
    /// with `input`, a pipe that ``send(_:)`` writes to). Throws when it cannot start (no such
    /// file, not executable), saying which.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                replacingEnvironment: [String: String]? = nil, output: Stream = .capture, errors: Stream = .capture,
                input: Bool = false) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var parentEnds: [Int32] = []
        defer { for fd in parentEnds { close(fd) } }
        func plumb(_ stream: Stream, to target: Int32) throws -> Collector? {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                return nil
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
                return nil
            case .capture:
                var ends: [Int32] = [-1, -1]
                // (pipe2 is declared only under _GNU_SOURCE; every child this type starts
                // closes all but its standard streams anyway.)
                guard pipe(&ends) == 0 else { throw SpawnError("cannot make a pipe for \(executable): \(String(cString: strerror(errno)))") }
                for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                parentEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return Collector(fd: ends[0])
            }
        }
        var inputEnd: Int32?
        if input {
            // A socket pair rather than a pipe: a write after the child closed its end fails with
            // EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in the test process.
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                throw SpawnError("cannot make a socket pair for \(executable): \(String(cString: strerror(errno)))")
            }
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            parentEnds.append(ends[0])
            posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
            inputEnd = ends[1]
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        let output = try plumb(output, to: 1)
        let errors = try plumb(errors, to: 2)
        Self.closeFrom(3, in: &actions)

        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        sigdelset(&allSignals, SIGKILL)
        sigdelset(&allSignals, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // A process group of its own, so ``kill()`` takes whatever it started too.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var environmentNow = replacingEnvironment ?? ProcessInfo.processInfo.environment
        for (key, value) in environment { environmentNow[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environmentNow.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            output?.discard()
            errors?.discard()
            if let inputEnd { close(inputEnd) }
            throw SpawnError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        self.output = output
        self.errors = errors
        self.input = inputEnd
        output?.start(name: "\(executable) stdout")
        errors?.start(name: "\(executable) stderr")
    }

    /// Closes every descriptor from `first` up in the child: glibc 2.34's
    /// `posix_spawn_file_actions_addclosefrom_np` (declared only under _GNU_SOURCE, so looked
    /// up by name), or each descriptor open now when it is missing.
    private static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd >= first {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    // MARK: - State

    /// Reaps the child if it has ended; true while it runs.
    public var isRunning: Bool { reap(block: false) == nil }

    /// The exit code, or the signal that ended it (as Foundation's `terminationStatus`); nil while it runs.
    public var status: Int32? {
        guard let raw = reap(block: false) else { return nil }
        return Self.exitedNormally(raw) ? (raw >> 8) & 0xFF : raw & 0x7F
    }

    /// Whether a signal ended it; nil while it runs.
    public var endedBySignal: Bool? { reap(block: false).map { !Self.exitedNormally($0) } }

    private static func exitedNormally(_ raw: Int32) -> Bool { raw & 0x7F == 0 }

    private func reap(block: Bool) -> Int32? {
        lock.withLock {
            if let waitStatus { return waitStatus }
            var raw: Int32 = 0
            while true {
                let result = waitpid(pid, &raw, block ? 0 : WNOHANG)
                if result == pid {
                    waitStatus = raw
                    return raw
                }
                if result == -1 && errno == EINTR { continue }
                return nil
            }
        }
    }

    // MARK: - Output

    /// What it wrote to standard output so far (with `.capture`).
    public var standardOutput: String { output?.text ?? "" }
    /// What it wrote to standard error so far (with `.capture`).
    public var standardError: String { errors?.text ?? "" }

    // MARK: - Signals and waiting

    public func signal(_ signal: Int32) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// SIGKILL to it and its process group, then reaps it (a killed process ends at once).
    public func kill() {
        guard isRunning else { return }
        Glibc.kill(-pid, SIGKILL)
        Glibc.kill(pid, SIGKILL)
        _ = reap(block: true)
    }

    /// Waits for the end without holding a thread: polls every 10 ms. Returns ``status``.
    @discardableResult
    public func wait() async -> Int32 {
        while true {
            if let status { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits on this thread, at most `timeout` seconds; nil if it still runs then.
    @discardableResult
    public func waitBlocking(timeout: Double = .infinity) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status { return status }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// Waits for the end and for its captured output (at most 10 s more for output that a
    /// process it started still holds open).
    public func finish() async -> (status: Int32, stdout: String, stderr: String) {
        let status = await wait()
        for collector in [output, errors].compactMap({ $0 }) { await collector.waitForEnd(seconds: 10) }
        return (status, standardOutput, standardError)
    }

    /// `signal`, then ``finish()``.
    public func interrupt(with signal: Int32 = SIGINT) async -> (status: Int32, stdout: String, stderr: String) {
        self.signal(signal)
        return await finish()
    }

    /// Writes `text` to its standard input (started with `input: true`); false when it cannot
    /// (no pipe, or the child closed it).
    @discardableResult
    public func send(_ text: String) -> Bool {
        lock.withLock {
            guard let input else { return false }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                bytes = bytes.dropFirst(written)
            }
            return true
        }
    }

    /// Closes its standard input (it reads end of file).
    public func closeInput() {
        lock.withLock {
            if let input { close(input) }
            input = nil
        }
    }

    /// Waits until `condition` holds for what it wrote to standard output and error, at most
    /// `timeout` seconds; false when it ended or the time passed first.
    public func waitForOutput(timeout: Double = 30, _ condition: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(standardOutput + standardError) { return true }
            if !isRunning {
                for collector in [output, errors].compactMap({ $0 }) { await collector.waitForEnd(seconds: 2) }
                return condition(standardOutput + standardError)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    deinit {
        kill()
        if let input { close(input) }
    }
}

/// Why a child could not start.
public struct SpawnError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Reads a pipe to its end on a thread of its own, so a chatty child never blocks on a full pipe.
private final class Collector: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var ended = false

    init(fd: Int32) { self.fd = fd }

    func start(name: String) {
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n > 0 {
                    lock.withLock { bytes.append(contentsOf: chunk[..<n]) }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            // The reader owns the descriptor: closed only once nothing reads it any more.
            Glibc.close(fd)
            lock.withLock { ended = true }
        }
        thread.name = name
        thread.start()
    }

    var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

    func waitForEnd(seconds: Double) async {
        let deadline = Date().addingTimeInterval(seconds)
        while !lock.withLock({ ended }) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Closes the read end of a pipe whose reader never started (the child did not start).
    func discard() { Glibc.close(fd) }
}
