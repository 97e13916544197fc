import Foundation

/// The peer of a Unix socket, as the kernel vouches for it (`SO_PEERCRED`; Glibc's `struct
/// ucred` is not visible to Swift without `_GNU_SOURCE`, so its layout is spelled here).
struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0

    init?(socket: Int32) {
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &self, &length) == 0 else { return nil }
    }
}

/// Small wrappers over the socket calls the local API needs; each retries `EINTR`.
enum UnixSocket {
    static func address(_ path: String) throws(AgentError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw AgentError("The socket path \(path) is longer than the \(capacity - 1) bytes a Unix socket allows; choose a shorter one.")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return address
    }

    static func connect(_ path: String) throws(AgentError) -> Int32 {
        var address = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentError("Cannot make a socket: \(String(cString: strerror(errno))).") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                retrying { Glibc.connect(fd, pointer, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED:
                throw AgentError("No agent is running (nothing listens on \(path)): start one with `nearplay agent`.", code: "agentNotRunning")
            case EACCES, EPERM:
                throw AgentError("Permission denied on \(path): the agent there belongs to another user.", code: "permissionDenied")
            default:
                throw AgentError("Cannot reach the agent on \(path): \(String(cString: strerror(code))).", code: "agentNotRunning")
            }
        }
        return fd
    }

    /// Writes all of `text`; false when the peer went away.
    static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        return bytes.withUnsafeMutableBytes { buffer in
            while offset < buffer.count {
                let n = retrying { send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }

    static func retrying<R: BinaryInteger>(_ call: () -> R) -> R {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
