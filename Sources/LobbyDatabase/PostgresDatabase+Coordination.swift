import Foundation
import Logging
import NIOCore
import PostgresNIO

/// What several lobby instances on one PostgreSQL need beyond transactions: one instance at a time
/// doing the work that must happen once (a lease), and word of what the others committed
/// (LISTEN/NOTIFY). Each runs on a connection of its own, outside the transaction workers.
extension PostgresDatabase {
    /// Runs `duty` while this process holds the lease `name`, for as long as the calling task
    /// lives: tries for the lease every `interval`, runs `duty` once it has it, and cancels `duty`
    /// when the lease is lost.
    ///
    /// The lease is a session advisory lock on a connection kept for it: PostgreSQL releases it
    /// the moment that connection ends, so when the holder dies (even by SIGKILL: the kernel closes
    /// its socket, and the server notices at once) another instance takes it at its next try,
    /// within `interval`. The holder checks its connection every `interval` too, and stops its duty
    /// when the check fails: it can no longer be sure it is the only one.
    public func holdingLease(_ name: String, interval: Duration = .seconds(1),
                             onChange: @escaping @Sendable (Bool) -> Void = { _ in },
                             _ duty: @escaping @Sendable () async -> Void) async {
        let key = Self.leaseKey(name)
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 1_000_000, logger: logger)
                defer { Task { try? await connection.close() } }
                // Wait for the lock.
                while !Task.isCancelled {
                    let rows = try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: logger).collect()
                    if try rows.first?.decode(Bool.self) == true { break }
                    try await Task.sleep(for: interval)
                }
                guard !Task.isCancelled else { return }
                logger.info("This instance holds the lease \u{201C}\(name)\u{201D}.")
                onChange(true)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await duty() }
                    group.addTask { [logger] in
                        // The watch: while the connection answers, the lock is ours.
                        while !Task.isCancelled {
                            do {
                                try await Task.sleep(for: interval)
                                _ = try await connection.query("SELECT 1", logger: logger).collect()
                            } catch {
                                if !Task.isCancelled {
                                    logger.warning("Lost the lease \u{201C}\(name)\u{201D}: \(WorkerConnection.describe(error)). Another instance may take it; this one tries again.")
                                }
                                return
                            }
                        }
                    }
                    // Whichever ends first (the duty, or the watch on losing the connection) ends both.
                    await group.next()
                    group.cancelAll()
                }
                onChange(false)
                if !Task.isCancelled { _ = try? await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger).collect() }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Cannot try for the lease \u{201C}\(name)\u{201D}: \(WorkerConnection.describe(error)). Trying again in \(interval).")
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
    }

    /// A stable 64-bit key for a lease name (FNV-1a), the same in every instance.
    static func leaseKey(_ name: String) -> Int64 { PostgresDatabaseKeys.key(name) }
}

/// The advisory-lock keys of leases.
public enum PostgresDatabaseKeys {
    public static func key(_ name: String) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in ("nearplay-lease:" + name).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01B3
        }
        return Int64(bitPattern: hash)
    }
}

extension PostgresDatabase {
    /// What arrives on a channel: a payload some transaction sent with `pg_notify` when it
    /// committed, or word that the listening connection was (re)established, after which anything
    /// sent while it was down is lost and the listener must catch up from the database.
    public enum ChannelMessage: Sendable, Equatable {
        case listening
        case payload(String)
    }

    /// Listens on `channel` for as long as the stream is consumed, reconnecting after the
    /// connection breaks (each time saying ``ChannelMessage/listening`` again).
    public func messages(on channel: String, retryEvery interval: Duration = .seconds(1)) -> AsyncStream<ChannelMessage> {
        let configuration = self.configuration
        let logger = self.logger
        return AsyncStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        let connection = try await PostgresConnection.connect(configuration: configuration, id: 2_000_000, logger: logger)
                        defer { Task { try? await connection.close() } }
                        try await connection.listen(on: channel) { notifications in
                            continuation.yield(.listening)
                            for try await notification in notifications {
                                continuation.yield(.payload(notification.payload))
                            }
                        }
                    } catch {
                        if Task.isCancelled { break }
                        logger.warning("Listening on \u{201C}\(channel)\u{201D} stopped: \(WorkerConnection.describe(error)). Trying again in \(interval).")
                    }
                    do { try await Task.sleep(for: interval) } catch { break }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension SQLSession {
    /// Sends `payload` on `channel` when the transaction commits (nothing if it rolls back). On
    /// SQLite, where one process holds the database, it does nothing.
    public func notify(_ channel: String, _ payload: String) throws {
        guard dialect == .postgres else { return }
        _ = try fetchAll("SELECT pg_notify(?, ?)", [.text(channel), .text(payload)])
    }
}
