import Foundation

/// Sessions already checked against the database, so that most requests authenticate without a
/// query. Entries keep the session's expiry; logging out, changing the password and deleting the
/// account remove them. On PostgreSQL, where other instances end sessions too, they announce it
/// (``WriteContext/sessionChannel``) and ``EventRelay`` removes the entries here.
final class SessionCache: @unchecked Sendable {
    private struct Entry {
        var player: Int64
        var expiresAt: Date
    }

    private let lock = NSLock()
    private var entries: [Data: Entry] = [:]
    /// Past this many entries the cache starts again from empty.
    private let capacity = 100_000

    func player(for tokenHash: Data, at now: Date) -> Int64? {
        lock.withLock {
            guard let entry = entries[tokenHash], entry.expiresAt > now else { return nil }
            return entry.player
        }
    }

    func remember(_ tokenHash: Data, player: Int64, until expiresAt: Date) {
        lock.withLock {
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[tokenHash] = Entry(player: player, expiresAt: expiresAt)
        }
    }

    func forget(_ tokenHash: Data) {
        lock.withLock { _ = entries.removeValue(forKey: tokenHash) }
    }

    func forgetAll() {
        lock.withLock { entries.removeAll() }
    }

    func forget(player: Int64) {
        lock.withLock { entries = entries.filter { $0.value.player != player } }
    }
}
