import BeaconKeys
import CoreMetrics
import Foundation
import GRDB
import HummingbirdBcrypt
import LobbyDatabase
import Logging
import Synchronization
import SystemSupport

/// The lobby's rules over its store: one SQLite file (the default) or a PostgreSQL database that
/// several lobby instances share. Every operation that changes more than one row or checks a limit
/// runs in one write transaction. On SQLite, GRDB serialises writes, so no interleaving of requests
/// can break a rule; on PostgreSQL, a rule that checks rows before changing others locks them first
/// (``SQLSession/lock(_:ids:)``, READ COMMITTED with row locks; see ``PostgresDatabase``). The
/// schema's constraints back both up.
///
/// Players are named by id here once authenticated (`authenticate(token:)` turns a bearer token into
/// one); the HTTP layer never passes anyone else's id.
public final class LobbyStore: Sendable {
    public let configuration: LobbyConfiguration
    /// Live fan-out of committed events.
    public let events: EventHub
    /// Signals every commit of this instance (the location screens wait on it).
    public let changes = ChangeSignal()
    let sessions: SessionCache
    /// Whether a write of players' activity is due already (PostgreSQL, ``noteActive(_:)``).
    let activityFlush = FlushFlag()
    let fairPlay: FairPlayLedger
    let database: any SQLDatabase
    /// The SQLite engine under ``database``, for what only SQLite has (WAL checkpoints, reads in
    /// place); nil on PostgreSQL.
    let sqlite: SQLiteDatabase?
    let checkpointer: WALCheckpointer?
    /// On PostgreSQL, what brings every instance's committed events to this one's subscribers.
    let relay: EventRelay?
    let clock: any LobbyClock
    let logger: Logger
    /// Time spent in read and write transactions (`nearplay_lobby_database_seconds`), for `/metrics`.
    let readTimer: CoreMetrics.Timer
    let metricsFactory: any MetricsFactory
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

    /// Opens (creating and migrating if needed) the SQLite store at `path`, in WAL mode with
    /// foreign keys on.
    public convenience init(
        path: String, configuration: LobbyConfiguration = .init(), clock: any LobbyClock = SystemClock(),
        logger: Logger = Logger(label: "nearplay.lobby"), metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws {
        let sqlite = try SQLiteDatabase(path: path)
        try LobbyMigrations.migrator.migrate(sqlite.pool)
        let checkpointer = try WALCheckpointer(path: path, logger: logger, metrics: metrics) { [pool = sqlite.pool] work in
            pool.asyncWriteWithoutTransaction { db in work(db) }
        }
        try sqlite.pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
        let identities = try sqlite.pool.read { db in try Self.storedIdentities(SQLiteSession(db: db)) }
        try self.init(database: sqlite, sqlite: sqlite, checkpointer: checkpointer, identities: identities,
                      configuration: configuration, clock: clock, logger: logger, metrics: metrics)
    }

    /// Opens the store at `location`: a PostgreSQL URL (`postgres://USER@HOST[:PORT]/DATABASE`, or
    /// `postgres://USER@/DATABASE?host=/run/postgresql` for a socket), migrated if needed under an
    /// advisory lock so that instances starting together migrate once; anything else is a SQLite
    /// file path.
    public static func open(
        _ location: String, configuration: LobbyConfiguration = .init(), clock: any LobbyClock = SystemClock(),
        logger: Logger = Logger(label: "nearplay.lobby"), metrics: any MetricsFactory = NOOPMetricsHandler.instance,
        poolSize: Int = 8
    ) async throws -> LobbyStore {
        guard PostgresDatabase.isURL(location) else {
            return try LobbyStore(path: location, configuration: configuration, clock: clock, logger: logger, metrics: metrics)
        }
        // READ COMMITTED with explicit row locks, not SERIALIZABLE with retries: the lobby's rules
        // check a few known rows (the players, the game) before changing others, so locking those
        // rows serialises exactly the requests that could break a rule, and nothing else waits.
        // Measured (Benchmarks/postgres.md): SERIALIZABLE aborted 461–1,580 of 40,000 transactions
        // on index-page predicate locks that did not share a row, and gave up on a few.
        let postgres = try await PostgresDatabase(url: location, poolSize: poolSize, isolation: .readCommittedWithLocks, logger: logger)
        do {
            try await postgres.migrate(LobbyMigrations.postgres)
            let identities = try await postgres.read { session in try Self.storedIdentities(session) }
            return try LobbyStore(database: postgres, sqlite: nil, checkpointer: nil, identities: identities,
                                  configuration: configuration, clock: clock, logger: logger, metrics: metrics)
        } catch {
            try? await postgres.close()
            throw error
        }
    }

    typealias StoredIdentities = (players: [(Int64, BeaconSecret)], locations: [(Int64, BeaconSecret)], since: Double?)

    static func storedIdentities(_ db: any SQLSession) throws -> StoredIdentities {
        func secrets(_ rows: [SQLRow]) throws -> [(Int64, BeaconSecret)] {
            try rows.compactMap { row in
                guard let bytes = try row.get(1, as: Data?.self), let secret = BeaconSecret(bytes: Array(bytes)) else { return nil }
                return (try row.get(0, as: Int64.self), secret)
            }
        }
        return (try secrets(db.fetchAll("SELECT id, beaconSecret FROM player WHERE beaconSecret IS NOT NULL AND deletedAt IS NULL")),
                try secrets(db.fetchAll("SELECT id, beaconSecret FROM location WHERE beaconSecret IS NOT NULL")),
                try db.fetchValue(Double.self, "SELECT value FROM lobbySetting WHERE name = 'staticIdentitiesSince'"))
    }

    private init(
        database: any SQLDatabase, sqlite: SQLiteDatabase?, checkpointer: WALCheckpointer?, identities stored: StoredIdentities,
        configuration: LobbyConfiguration, clock: any LobbyClock, logger: Logger, metrics: any MetricsFactory
    ) throws {
        let configuration = try configuration.validated()
        let hub = EventHub(bufferSize: configuration.liveEventBuffer)
        events = hub
        self.database = database
        self.sqlite = sqlite
        self.checkpointer = checkpointer
        let cache = SessionCache()
        sessions = cache
        let directory = IdentityDirectory(period: configuration.rotationPeriod)
        identities = directory
        relay = (database as? PostgresDatabase).map { EventRelay(database: $0, hub: hub, identities: directory, sessions: cache, clock: clock, logger: logger) }
        self.configuration = configuration
        fairPlay = FairPlayLedger(configuration)
        let cost = configuration.bcryptCost
        let dummyHash: @Sendable () -> String = { Bcrypt.hash("no account has this password", cost: cost) }
        // NIO's pool refuses work only once shut down (the singleton never is), or cancelled
        // (nothing cancels this task): then the hash is made here.
        dummyPasswordHash = Task { (try? await offload(dummyHash)) ?? dummyHash() }
        self.clock = clock
        self.logger = logger
        metricsFactory = metrics
        readTimer = Timer(label: "nearplay_lobby_database_seconds", dimensions: [("access", "read")], factory: metrics)
        writeTimer = Timer(label: "nearplay_lobby_database_seconds", dimensions: [("access", "write")], factory: metrics)
        flagCounters = Dictionary(uniqueKeysWithValues: PlayerFlagReason.allCases.map {
            ($0, Counter(label: "nearplay_lobby_players_flagged_total", dimensions: [("reason", $0.rawValue)], factory: metrics))
        })
        presenceRefusals = Dictionary(uniqueKeysWithValues: PresenceRefusal.allCases.map {
            ($0.rawValue, Counter(label: "nearplay_lobby_presence_refused_total", dimensions: [("reason", $0.rawValue)], factory: metrics))
        })
        identities.load(players: stored.players, locations: stored.locations, now: clock.now())
        staticIdentitiesUntil = stored.since.flatMap { since in
            configuration.staticIdentityGrace > 0 ? Date(timeIntervalSince1970: since + configuration.staticIdentityGrace) : nil
        }
    }

    /// Closes every connection (on SQLite after checkpointing the WAL). Call once, after the last
    /// request. On PostgreSQL the connections close as their threads finish what they run.
    public func close() throws {
        relay?.stop()
        guard let sqlite, let checkpointer else {
            (database as? PostgresDatabase)?.beginClosing()
            return
        }
        try sqlite.pool.writeWithoutTransaction { db in
            checkpointer.stop(removingHookFrom: db)
            _ = try db.checkpoint(.truncate)
        }
        try sqlite.pool.close()
    }

    /// WAL checkpoints since the store opened: run beside the writer, short ones on the writer's
    /// queue between transactions, and inside a commit (only when the others fell behind).
    public var checkpoints: (background: Int, finishing: Int, inCommit: Int) { checkpointer?.checkpoints ?? (0, 0, 0) }

    /// Runs `body` in one write transaction, then publishes the events it recorded once committed.
    ///
    /// The transaction runs on the engine's own threads (GRDB's writer queue, or a PostgreSQL
    /// worker) while the calling task is suspended: a request waiting for the database must not
    /// hold one of the few threads that serve HTTP (under `lobby serve` those are NIO's event
    /// loops). On SQLite, reads, which the writer never blocks in WAL mode, run in place
    /// (``read(_:)``).
    ///
    /// On PostgreSQL the body may run again after a deadlock or serialization failure, so it keeps
    /// its effects in the database and in the context until it returns.
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
                    try db.execute("UPDATE player SET activeAt = ? WHERE id = ? AND (activeAt IS NULL OR activeAt < ?)",
                                   at.unixTime, player, at.unixTime)
                }
                var context = WriteContext(db: db, now: now)
                let value = try body(&context)
                return (value, try context.storeEvents())
            }
        } catch {
            fairPlay.requeue(activity)
            throw error
        }
        // On PostgreSQL every instance, this one included, pushes events as their NOTIFY arrives
        // (``EventRelay``): that keeps each player's pushes in commit order across instances.
        if sqlite != nil { events.publish(recorded) }
        changes.signal()
        return value
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession, Date) throws -> T) async throws -> T {
        let now = clock.now()
        let started = ContinuousClock.now
        defer { readTimer.record(since: started) }
        if let sqlite { return try readNow(sqlite) { db in try body(db, now) } }
        return try await database.read { db in try body(db, now) }
    }

    // Synchronous GRDB access: in a synchronous function the blocking overload is the one chosen.
    private func readNow<T>(_ sqlite: SQLiteDatabase, _ value: (any SQLSession) throws -> T) throws -> T {
        try sqlite.pool.read { db in try SQLiteDatabase.translatingErrors { try value(SQLiteSession(db: db)) } }
    }
}

/// What one write transaction sees: its connection, its single "now", and the events it recorded.
struct WriteContext {
    let db: any SQLSession
    let now: Date
    /// Events recorded so far, stored when the body has returned (``storeEvents()``).
    var events: [(playerId: Int64, kind: LobbyEvent.Kind, data: EventData)] = []

    /// Notes an event for `playerId`, to be stored in the feed at the end of the transaction and
    /// pushed once it commits.
    mutating func record(_ kind: LobbyEvent.Kind, for playerId: Int64, _ data: EventData) throws {
        events.append((playerId, kind, data))
    }

    /// The channel on which PostgreSQL instances tell each other which events they committed.
    static let eventChannel = "nearplay_events"
    /// The channel on which they tell each other of new beacon secrets (`player:ID`, `location:ID`):
    /// each resolves rotating identities from tables in its own memory.
    static let identityChannel = "nearplay_identities"
    /// The channel on which they tell each other of sessions ended (`token:BASE64`, `player:ID`),
    /// which each instance may hold in its ``SessionCache``.
    static let sessionChannel = "nearplay_sessions"

    /// Stores the recorded events in the feed and answers them with their cursors.
    ///
    /// A player's cursors must grow in the order their transactions commit, or a client that read
    /// the feed up to cursor 11 would never see a 10 that committed after 11. SQLite's one writer
    /// gives that order for free. On PostgreSQL, concurrent transactions draw ids from one sequence
    /// and may commit in any order, so each transaction first takes a transaction-scoped advisory
    /// lock per player it writes events for (in player order, so two never wait on each other in
    /// a circle) and only then draws the ids: a second writer for the same player waits until the
    /// first has committed. The events go last in the transaction, so the locks are held for the
    /// inserts and the commit only. Every instance learns of the events through a NOTIFY sent on
    /// commit, in commit order, carrying `player:cursor` pairs.
    mutating func storeEvents() throws -> [(playerId: Int64, event: LobbyEvent)] {
        guard !events.isEmpty else { return [] }
        let order = events.indices.sorted { (events[$0].playerId, $0) < (events[$1].playerId, $1) }
        if db.dialect == .postgres {
            for player in Set(events.map(\.playerId)).sorted() {
                try db.execute("SELECT pg_advisory_xact_lock(?)", Self.eventLockSpace | (player & 0xFFFF_FFFF_FFFF))
            }
        }
        var stored: [(playerId: Int64, event: LobbyEvent)] = []
        stored.reserveCapacity(events.count)
        for index in order {
            let (playerId, kind, data) = events[index]
            let payload = String(decoding: JSONWriter.encode(data), as: UTF8.self)
            guard let cursor = try db.fetchValue(Int64.self, "INSERT INTO event (playerId, at, kind, payload) VALUES (?, ?, ?, ?) RETURNING id",
                                                 playerId, now.unixTime, kind, payload) else {
                throw SQLError.connection("the database stored an event without answering its id")
            }
            stored.append((playerId, LobbyEvent(cursor: cursor, at: now, kind: kind, data: data)))
        }
        if db.dialect == .postgres {
            // A notification carries at most 8,000 bytes: 200 pairs of two 19-digit numbers fit.
            for start in stride(from: 0, to: stored.count, by: 200) {
                let pairs = stored[start..<min(start + 200, stored.count)].map { "\($0.playerId):\($0.event.cursor)" }
                try db.notify(Self.eventChannel, pairs.joined(separator: ","))
            }
        }
        return stored
    }

    /// The high 16 bits of the advisory-lock keys that order a player's events ("Ev"); the player's
    /// id fills the low 48.
    static let eventLockSpace: Int64 = 0x4576 << 48
}

/// One pending flush at a time: ``begin()`` answers true to the caller that is to run it.
final class FlushFlag: Sendable {
    private let pending = Mutex(false)

    func begin() -> Bool {
        pending.withLock { pending in
            if pending { return false }
            pending = true
            return true
        }
    }

    /// The flush has taken what was pending (call before it writes, so nothing noted during the write waits for the next one).
    func end() { pending.withLock { $0 = false } }
}

extension CoreMetrics.Timer {
    /// Records the time from `started` to now.
    func record(since started: ContinuousClock.Instant) {
        recordNanoseconds((ContinuousClock.now - started).wholeNanoseconds)
    }
}
