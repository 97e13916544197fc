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
