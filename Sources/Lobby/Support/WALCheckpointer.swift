import CoreMetrics
import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Keeps WAL checkpoints out of the requests' commits.
///
/// SQLite's own auto-checkpoint runs inside the commit that takes the log past 1,000 pages. A
/// finished game writes some 80 pages (results, four boards and their tallies, league,
/// achievements, events, the recording), so every twelfth submission copied about 4 MB into the
/// database file and synced it: 10 to 20 ms, the whole p99 of a submission (2.6 ms with no
/// checkpoint at all). Here the writer connection's WAL hook, which replaces the auto-checkpoint,
/// wakes a connection of this checkpointer's own once the log holds ``wakeFrames`` pages; it
/// copies the log passively, beside the writer and the readers, which never wait for it.
///
/// Only a write that finds the log wholly copied starts it over, and under a steady stream of
/// writes some frames always land while a pass runs, so the log keeps growing. When a pass finds
/// it at ``restartFrames``, one more pass runs on the writer's own queue, between two
/// transactions, where nothing can be appended: it copies what landed since (the background pass
/// has copied the rest) and the next write starts the log over. That pass is the one cost a
/// request can still meet, once in some 250 submissions. Should the log reach ``forceFrames``
/// anyway, the commit that finds it checkpoints in place, as SQLite would have.
final class WALCheckpointer: Sendable {
    /// Log length (pages) from which a commit wakes the background pass: 4 MB.
    static let wakeFrames: Int32 = 1024
    /// Log length (pages) from which the log is started over: 64 MB.
    static let restartFrames = 16384
    /// Log length (pages) at which a commit checkpoints in place: 128 MB.
    static let forceFrames: Int32 = 32768

    private let connection: DatabaseQueue
    private let wakeups: AsyncStream<Void>.Continuation
    /// Signalled when the background pass has ended.
    private let ended = DispatchSemaphore(value: 0)
    private let counts = Mutex((background: 0, finishing: 0, inCommit: 0))
    private let background: CoreMetrics.Counter
    private let finishing: CoreMetrics.Counter
    private let inCommit: CoreMetrics.Counter

    /// - Parameter finish: runs a passive checkpoint on the writer's queue, after the transaction
    ///   running now (the store's `asyncWriteWithoutTransaction`).
    init(path: String, logger: Logger, metrics: any MetricsFactory,
         finish: @escaping @Sendable (@escaping @Sendable (Database) -> Void) -> Void) throws {
        var configuration = Configuration()
        configuration.label = "wal-checkpointer"
        connection = try DatabaseQueue(path: path, configuration: configuration)
        background = Counter(label: "nearplay_lobby_wal_checkpoints_total", dimensions: [("where", "background")], factory: metrics)
        finishing = Counter(label: "nearplay_lobby_wal_checkpoints_total", dimensions: [("where", "writer")], factory: metrics)
        inCommit = Counter(label: "nearplay_lobby_wal_checkpoints_total", dimensions: [("where", "commit")], factory: metrics)
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        wakeups = continuation
        Task.detached(priority: .utility) { [weak self, connection, ended] in
            defer { ended.signal() }
            for await _ in stream {
                do {
                    let (log, copied) = try await connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
                    guard let checkpointer = self else { continue }
                    checkpointer.counted(.background)
                    if log >= Self.restartFrames {
                        finish { [weak checkpointer] db in
                            guard (try? db.checkpoint(.passive)) != nil else { return }
                            checkpointer?.counted(.finishing)
                        }
                    }
                } catch {
                    logger.debug("background WAL checkpoint: \(error)")
                }
                // At most 50 passes a second, however busy the writer.
                do { try await Task.sleep(for: .milliseconds(20)) } catch { break }
            }
        }
    }

    /// How many checkpoints ran in the background, on the writer's queue between transactions
    /// and in a commit since the store opened.
    var checkpoints: (background: Int, finishing: Int, inCommit: Int) { counts.withLock { $0 } }

    /// Replaces the writer connection's auto-checkpoint with this checkpointer's hook.
    func install(on db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Removes the hook from the writer connection `db` (SQLite's auto-checkpoint stays off) and
    /// waits for the background pass to end (at most 5 s); call before the last checkpoint.
    func stop(removingHookFrom db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, nil, nil)
        wakeups.finish()
        _ = ended.wait(timeout: .now() + 5)
        try? connection.close()
    }

    private enum Place { case background, finishing, inCommit }

    private func counted(_ place: Place) {
        counts.withLock {
            switch place {
            case .background: $0.background += 1
            case .finishing: $0.finishing += 1
            case .inCommit: $0.inCommit += 1
            }
        }
        switch place {
        case .background: background.increment()
        case .finishing: finishing.increment()
        case .inCommit: inCommit.increment()
        }
    }

    fileprivate func committed(_ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, frames: Int32) {
        if frames >= Self.forceFrames {
            sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            counted(.inCommit)
        } else if frames >= Self.wakeFrames {
            wakeups.yield()
        }
    }
}

/// SQLite's WAL hook: called after each commit of the writer connection with the log's length.
private func walHook(_ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ frames: Int32) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(db, name, frames: frames)
    return SQLITE_OK
}
