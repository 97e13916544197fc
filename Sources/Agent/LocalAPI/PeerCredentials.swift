import Foundation

/// The peer of a Unix socket, as the kernel vouches for it (`SO_PEERCRED`, read through NIO's
/// `SocketOptionProvider` before a connection is served; Glibc's `struct ucred` is not visible
/// to Swift without `_GNU_SOURCE`, so its layout is spelled here).
struct PeerCredentials: Sendable {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
