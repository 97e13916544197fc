import Glibc

/// A system call that failed: which one, on what, and errno.
///
/// An open set (any errno), so a struct rather than an enum; each library turns it into its own
/// error where it knows what the file was for (``SensorError`` says which udev rule is missing,
/// the D-Bus connection which pipe it could not make).
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call, as its manual page names it: `open`, `read`, `write`, `poll`, `pipe`, `fcntl`.
    public var operation: String
    /// The file or device it was made on, when there is one to name.
    public var path: String?
    public var errno: Int32

    public init(_ operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `strerror`'s text for ``errno``.
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        "\(operation)\(path.map { " " + $0 } ?? "") failed: \(reason) (errno \(errno))"
    }
}

/// The POSIX calls Nearplay makes on file descriptors, each retrying `EINTR` and throwing a
/// ``SystemCallError`` with errno, as swift-nio does for all of its calls: a signal arriving in
/// the middle of a read is not an error, and a failure is never silently ignored.
///
/// Descriptors are opened close-on-exec, so a spawned helper never inherits them.
public enum SystemCall {
    /// Opens `path`; `O_CLOEXEC` is added to `flags`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw SystemCallError("open", path: path, errno: code)
        }
    }

    /// Reads up to `count` bytes; 0 means end of file, -1 that a non-blocking descriptor has no
    /// data yet (`EAGAIN`).
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, path: String? = nil) throws(SystemCallError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n >= 0 { return n }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EAGAIN { return -1 }
            throw SystemCallError("read", path: path, errno: code)
        }
    }

    /// Reads into `bytes` from index `start` up to its end; 0 means end of file, -1 no data yet.
    public static func read(_ fd: Int32, into bytes: inout [UInt8], from start: Int = 0, path: String? = nil) throws(SystemCallError) -> Int {
        let result: Result<Int, SystemCallError> = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in
                try read(fd, into: buffer.baseAddress! + start, count: buffer.count - start, path: path)
            }
        }
        return try result.get()
    }

    /// Writes all of `bytes`, however many calls that takes.
    public static func write(_ fd: Int32, _ bytes: [UInt8], path: String? = nil) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                let code = Glibc.errno
                if code == EINTR { continue }
                throw SystemCallError("write", path: path, errno: code)
            }
            written += n
        }
    }

    /// Writes one byte to a non-blocking descriptor (a wake-up pipe); false when it is full
    /// (`EAGAIN`), which for a wake-up means one is already pending.
    public static func writeByte(_ fd: Int32, _ byte: UInt8, path: String? = nil) throws(SystemCallError) -> Bool {
        var value = byte
        while true {
            if Glibc.write(fd, &value, 1) == 1 { return true }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EAGAIN { return false }
            throw SystemCallError("write", path: path, errno: code)
        }
    }

    /// Waits up to `timeoutMilliseconds` for `fd` to become readable; false on timeout.
    public static func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32, path: String? = nil) throws(SystemCallError) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = Glibc.poll(&descriptor, 1, timeoutMilliseconds)
            if n > 0 { return true }
            if n == 0 { return false }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw SystemCallError("poll", path: path, errno: code)
        }
    }

    /// A pipe whose ends are close-on-exec and, when `nonBlocking`, non-blocking. (`pipe2`, which
    /// would do it in one call, is not in Swift's Glibc module.)
    public static func pipe(nonBlocking: Bool) throws(SystemCallError) -> (reader: Int32, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw SystemCallError("pipe", errno: Glibc.errno) }
        do throws(SystemCallError) {
            for fd in fds {
                if nonBlocking { try setStatusFlags(fd, adding: O_NONBLOCK) }
                guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw SystemCallError("fcntl", errno: Glibc.errno) }
            }
        } catch {
            fds.forEach(close)
            throw error
        }
        return (fds[0], fds[1])
    }

    /// Adds `flags` (`O_NONBLOCK`) to the descriptor's status flags.
    public static func setStatusFlags(_ fd: Int32, adding flags: Int32) throws(SystemCallError) {
        let current = fcntl(fd, F_GETFL)
        guard current >= 0, fcntl(fd, F_SETFL, current | flags) == 0 else {
            throw SystemCallError("fcntl", errno: Glibc.errno)
        }
    }

    /// Closes `fd`. Not retried on `EINTR`: Linux has released the descriptor already, and a
    /// second close could close one another thread just opened.
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
