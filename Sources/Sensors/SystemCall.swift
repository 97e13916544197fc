import Glibc

/// The text of an errno value, as `strerror` gives it.
func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// Thin wrappers over the POSIX calls the sensors use: each retries `EINTR` and throws a
/// ``SensorError`` naming the file.
enum SystemCall {
    static func open(_ path: String, _ flags: Int32) throws(SensorError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC)
            if fd >= 0 { return fd }
            let code = errno
            switch code {
            case EINTR: continue
            case EACCES, EPERM: throw .permissionDenied(path: path)
            case ENOENT: throw .missingAttribute(path: path)
            default: throw .io(path: path, operation: "open", errno: code)
            }
        }
    }

    /// Reads up to `count` bytes; 0 means end of file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, path: String) throws(SensorError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno == EAGAIN { return -1 }
            throw .io(path: path, operation: "read", errno: errno)
        }
    }

    /// Reads into `bytes` from index `start` up to its end; 0 means end of file, -1 no data yet.
    static func read(_ fd: Int32, into bytes: inout [UInt8], from start: Int = 0, path: String) throws(SensorError) -> Int {
        let result: Result<Int, SensorError> = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SensorError) in
                try read(fd, into: buffer.baseAddress! + start, count: buffer.count - start, path: path)
            }
        }
        return try result.get()
    }

    static func write(_ fd: Int32, _ bytes: [UInt8], path: String) throws(SensorError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "write", errno: errno)
            }
            written += n
        }
    }

    /// Waits up to `timeoutMilliseconds` for `fd` to become readable; false on timeout.
    static func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32, path: String) throws(SensorError) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&descriptor, 1, timeoutMilliseconds)
            if n > 0 { return true }
            if n == 0 { return false }
            if errno == EINTR { continue }
            throw .io(path: path, operation: "poll", errno: errno)
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

/// Seconds on CLOCK_MONOTONIC, the time base of samples that carry no device timestamp.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
