import Glibc

/// A system call on a Unix socket (the simulated air's, the agent's local API) that failed, with
/// its errno.
public struct SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `connect`, `bind`, `read` and so on.
    public var operation: String
    public var path: String
    public var code: Int32
    /// What to do about it, when there is something to say.
    public var advice: String?

    public init(_ operation: String, path: String, code: Int32, advice: String? = nil) {
        self.operation = operation
        self.path = path
        self.code = code
        self.advice = advice
    }

    public var description: String {
        let base = "cannot \(operation) the socket \(path): \(String(cString: strerror(code)))"
        return advice.map { base + "; " + $0 } ?? base
    }

    /// Nobody listens there (yet, or any more), or the folder is missing: worth trying again later.
    public var isHubAbsent: Bool {
        [ENOENT, ENOTDIR, ECONNREFUSED, EAGAIN, ECONNRESET, EPIPE, ETIMEDOUT].contains(code)
    }
}

/// The Unix stream socket calls Nearplay makes (the simulated air, the agent's local API): each
/// retries `EINTR`, throws a ``SocketError`` with errno and the path, and leaves descriptors
/// close-on-exec and, unless asked otherwise, non-blocking. Binding and connecting happen here,
/// where errors become sentences; reading and writing a connection is NIO's (`NIOAsyncChannel`),
/// which takes the descriptors over.
public enum UnixSocket {
    /// Binds and listens at `path`, replacing a stale socket file that nobody listens on. With
    /// `mode`, the socket file has those permissions before anyone can connect to it. The file appears
    /// at `path` only once the socket listens (bound under a temporary name beside it, then
    /// linked), so a client that sees the file can connect: it never finds a socket that
    /// refuses connections because it does not listen yet.
    public static func listen(path: String, mode: mode_t? = nil) throws(SocketError) -> Int32 {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw SocketError("bind", path: path, code: EEXIST, advice: "it exists and is not a socket; remove it or choose another path")
            }
            if let fd = try? connect(path: path) {
                Glibc.close(fd)
                throw SocketError("bind", path: path, code: EADDRINUSE, advice: "another process is listening there; stop it or choose another path")
            }
            unlink(path)
        }
        let fd = try makeSocket(path: path)
        _ = try socketAddress(path)
        // The temporary name, when it fits in a socket address; else the path itself.
        let temporary = (try? socketAddress(path + ".\(getpid()).new")) == nil ? path : path + ".\(getpid()).new"
        var address = try socketAddress(temporary)
        unlink(temporary)
        // The mode is set before the socket listens, and nobody can connect to a socket that does
        // not listen yet, so no connection is ever made under looser permissions. (Not with
        // umask: it is the whole process's, and a file another thread created meanwhile, a
        // test's PostgreSQL folder, say, came out 0600 too.)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, mode.map({ chmod(temporary, $0) == 0 }) ?? true else {
            let code = errno
            Glibc.close(fd)
            if bound == 0 { unlink(temporary) }
            throw SocketError("bind", path: path, code: code)
        }
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            Glibc.close(fd)
            unlink(temporary)
            throw SocketError("listen on", path: path, code: code)
        }
        // link, not rename: it fails rather than replace a socket another process bound meanwhile.
        if temporary != path {
            let linked = link(temporary, path)
            let code = errno
            unlink(temporary)
            guard linked == 0 else {
                Glibc.close(fd)
                throw SocketError("bind", path: path, code: code == EEXIST ? EADDRINUSE : code,
                                  advice: code == EEXIST ? "another process is listening there; stop it or choose another path" : nil)
            }
        }
        return fd
    }

    /// Connects to whoever listens at `path`; `blocking` for callers that wait in `recv`.
    public static func connect(path: String, blocking: Bool = false) throws(SocketError) -> Int32 {
        let fd = try makeSocket(path: path, blocking: blocking)
        var address = try socketAddress(path)
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if result == 0 { return fd }
            let code = errno
            if code == EINTR { continue }
            Glibc.close(fd)
            throw SocketError("connect to", path: path, code: code)
        }
    }

    /// Writes what it can of `bytes[offset...]` without blocking; returns how many bytes went.
    /// Never raises SIGPIPE: a closed peer is an `EPIPE` error.
    public static func write(_ fd: Int32, _ bytes: [UInt8], from offset: Int, path: String) throws(SocketError) -> Int {
        var written = 0
        while offset + written < bytes.count {
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset + written, $0.count - offset - written, Int32(MSG_NOSIGNAL))
            }
            if n >= 0 {
                written += n
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN: return written
            case let code: throw SocketError("write to", path: path, code: code)
            }
        }
        return written
    }

    /// Writes all of `bytes`, waiting up to `timeout` milliseconds in all for room: for small
    /// messages, and for a peer too slow to read them a bounded wait.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String, timeout: Int32 = 2000) throws(SocketError) {
        var offset = 0
        var waited: Int32 = 0
        while offset < bytes.count {
            offset += try write(fd, bytes, from: offset, path: path)
            if offset < bytes.count {
                guard waited < timeout else { throw SocketError("write to", path: path, code: ETIMEDOUT) }
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 50)
                waited += 50
            }
        }
    }

    private static func makeSocket(path: String, blocking: Bool = false) throws(SocketError) -> Int32 {
        let flags = SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | (blocking ? 0 : SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_UNIX, Int32(flags), 0)
        guard fd >= 0 else { throw SocketError("create", path: path, code: errno) }
        return fd
    }

    private static func socketAddress(_ path: String) throws(SocketError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SocketError("use", path: path, code: ENAMETOOLONG,
                              advice: "a socket path has 1 to \(capacity - 1) bytes; choose a shorter one")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        return address
    }
}
