import BeaconKeys
import CoreMetrics
import Foundation
import GRDB
import HummingbirdBcrypt
import Logging

/// The lobby's rules over its SQLite store. Every operation that changes more than one row or checks
/// a limit runs in one write transaction; GRDB serialises writes, so no interleaving of requests can
/// break a rule, and the schema's constraints back that up.
///
/// Players are named by id here once authenticated (`authenticate(token:)` turns a bearer token into
/// one); the HTTP layer never passes anyone else's id.
public final class LobbyStore: Sendable {
    public let configuration: LobbyConfiguration
    /// Live fan-out of committed events.
    public let events: EventHub
    let sessions = SessionCache()
    let fairPlay: FairPlayLedger
    let database: DatabasePool
    let checkpointer: WALCheckpointer
    let clock: any LobbyClock
    let logger: Logger
    /// Time spent in read and write transactions (`nearplay_lobby_database_seconds`), for `/metrics`.
    let readTimer: CoreMetrics.Timer
    let writeTimer: CoreMetrics.Timer
    /// Players flagged by ``ScoreScrutiny`` (`nearplay_lobby_players_flagged_total`), by reason.
    let flagCounters: [PlayerFlagReason: CoreMetrics.Counter]
    /// A hash at the configured cost that sign-ins for unknown usernames are checked against, so
    /// they take as long as sign-ins with a wrong password. Made off the cooperative pool while the
    /// store opens (at cost 12 it takes a few hundred milliseconds of one core).
    let dummyPasswordHash: Task<String, Never>
    /// Every player's and location's rotating identity around now.
    let identities: IdentityDirectory
    /// Until when the static identities of before rotation still resolve; nil when they never
    /// do (``LobbyConfiguration/staticIdentityGrace``).
    let staticIdentitiesUntil: Date?
    /// Sightings of locations refused as proof of presence
    /// (`nearplay_lobby_presence_refused_total`), by reason.
    let presenceRefusals: [String: CoreMetrics.Counter]

    /// Opens (creating and migrating if needed) the store at `path`, in WAL mode with foreign keys on.
    public init(
        path: String, configuration: LobbyConfiguration = .init(), clock: any LobbyClock = SystemClock(),
        logger: Logger = Logger(label: "nearplay.lobby"), metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws {
        var databaseConfiguration = Configuration()
        databaseConfiguration.foreignKeysEnabled = true
        databaseConfiguration.busyMode = .timeout(10)
        databaseConfiguration.prepareDatabase { db in
            // WAL with synchronous=NORMAL: a commit is in the WAL file when write() returns, so it
            // survives the process being killed; only a power loss can roll back the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let configuration = try configuration.validated()
        events = EventHub(bufferSize: configuration.liveEventBuffer)
        database = try DatabasePool(path: path, configuration: databaseConfiguration)
        try LobbyMigrations.migrator.migrate(database)
        checkpointer = try WALCheckpointer(path: path, logger: logger, metrics: metrics) { [database] work in
            database.asyncWriteWithoutTransaction { db in work(db) }
        }
        try database.writeWithoutTransaction { [checkpointer] db in checkpointer.install(on: db) }
        self.configuration = configuration
        fairPlay = FairPlayLedger(configuration)
        let cost = configuration.bcryptCost
        dummyPasswordHash = Task { await offload { Bcrypt.hash("no account has this password", cost: cost) } }
        self.clock = clock
        self.logger = logger
        readTimer = Timer(label: "nearplay_lobby_database_seconds", dimensions: [("access", "read")], factory: metrics)
        writeTimer = Timer(label: "nearplay_lobby_database_seconds", dimensions: [("access", "write")], factory: metrics)
        flagCounters = Dictionary(uniqueKeysWithValues: PlayerFlagReason.allCases.map {
            ($0, Counter(label: "nearplay_lobby_players_flagged_total", dimensions: [("reason", $0.rawValue)], factory: metrics))
        })
        presenceRefusals = Dictionary(uniqueKeysWithValues: PresenceRefusal.allCases.map {
            ($0.rawValue, Counter(label: "nearplay_lobby_presence_refused_total", dimensions: [("reason", $0.rawValue)], factory: metrics))
        })
        identities = IdentityDirectory(period: configuration.rotationPeriod)
        let (players, locations, since) = try database.read { db in
            (try Row.fetchAll(db, sql: "SELECT id, beaconSecret FROM player WHERE beaconSecret IS NOT NULL AND deletedAt IS NULL"),
             try Row.fetchAll(db, sql: "SELECT id, beaconSecret FROM location WHERE beaconSecret IS NOT NULL"),
             try Double.fetchOne(db, sql: "SELECT value FROM lobbySetting WHERE name = 'staticIdentitiesSince'"))
        }
        func secrets(_ rows: [Row]) -> [(Int64, BeaconSecret)] {
            rows.compactMap { row in (row["beaconSecret"] as Data?).flatMap { BeaconSecret(bytes: Array($0)) }.map { (row["id"], $0) } }
        }
        identities.load(players: secrets(players), locations: secrets(locations), now: clock.now())
        staticIdentitiesUntil = since.flatMap { since in
            configuration.staticIdentityGrace > 0 ? Date(timeIntervalSince1970: since + configuration.staticIdentityGrace) : nil
        }
    }

    /// Checkpoints the WAL and closes every connection. Call once, after the last request.
    public func close() throws {
        try database.writeWithoutTransaction { [checkpointer] db in
            checkpointer.stop(removingHookFrom: db)
            _ = try db.checkpoint(.truncate)
        }
        try database.close()
    }

    /// WAL checkpoints since the store opened: run beside the writer, short ones on the writer's
    /// queue between transactions, and inside a commit (only when the others fell behind).
    public var checkpoints: (background: Int, finishing: Int, inCommit: Int) { checkpointer.checkpoints }

    /// Runs `body` in one write transaction, then publishes the events it recorded once committed.
    ///
    /// The transaction runs on GRDB's writer queue while the calling task is suspended: a request
    /// waiting for the single writer must not hold one of the few threads that serve HTTP (under
    /// `lobby serve` those are NIO's event loops). Reads, which the writer never blocks in WAL
    /// mode, run in place (``read(_:)``).
    func write<T: Sendable>(_ body: @escaping @Sendable (inout WriteContext) throws -> T) async throws -> T {
        let now = clock.now()
        let timer = writeTimer
        // Players' activity rides along with whatever is written next (FairPlayLedger).
        let activity = fairPlay.takePendingActivity()
        let (value, recorded): (T, [(playerId: Int64, event: LobbyEvent)])
        do {
            (value, recorded) = try await database.write { db in
                let started = ContinuousClock.now
                defer { timer.record(since: started) }
                for (player, at) in activity {
                    try db.cached("UPDATE player SET activeAt = ? WHERE id = ? AND (activeAt IS NULL OR activeAt < ?)")
                        .execute(arguments: [at.unixTime, player, at.unixTime])
                }
                var context = WriteContext(db: db, now: now)
                let value = try body(&context)
                return (value, context.events)
            }
        } catch {
            fairPlay.requeue(activity)
            throw error
        }
        events.publish(recorded)
        return value
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database, Date) throws -> T) async throws -> T {
        let now = clock.now()
        let started = ContinuousClock.now
        defer { readTimer.record(since: started) }
        return try readNow { db in try body(db, now) }
    }

    // Synchronous GRDB access: in a synchronous function the blocking overload is the one chosen.
    private func readNow<T>(_ value: (Database) throws -> T) throws -> T { try database.read(value) }
}

/// What one write transaction sees: its connection, its single "now", and the events it recorded.
struct WriteContext {
    let db: Database
    let now: Date
    var events: [(playerId: Int64, event: LobbyEvent)] = []

    /// Stores an event for `playerId` in the feed, to be pushed once the transaction commits.
    mutating func record(_ kind: LobbyEvent.Kind, for playerId: Int64, _ data: EventData) throws {
        let payload = String(decoding: JSONWriter.encode(data), as: UTF8.self)
        var row = EventRecord(id: nil, playerId: playerId, at: now, kind: kind.rawValue, payload: payload)
        try row.insertRow(db)
        events.append((playerId, LobbyEvent(cursor: row.id!, at: now, kind: kind, data: data)))
    }
}

extension CoreMetrics.Timer {
    /// Records the time from `started` to now.
    func record(since started: ContinuousClock.Instant) {
        let elapsed = (ContinuousClock.now - started).components
        recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }
}
