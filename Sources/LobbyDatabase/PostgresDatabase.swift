import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The lobby on PostgreSQL, for deployments with several lobby instances sharing one database.
///
/// Transaction bodies are synchronous (the lobby's rules are written once, for both engines), so
/// they run on threads of this type's own, each holding one connection and blocking on it; the
/// calling task waits without holding a cooperative or event-loop thread.
///
/// **Isolation.** Writes run at SERIALIZABLE. The lobby's rules are check-then-act ("fewer than 10
/// open invitations, so insert one"; "not rewarded yet, so reward"), and under SERIALIZABLE
/// PostgreSQL aborts whichever of two such transactions would make the outcome differ from running
/// them one after the other, exactly the guarantee SQLite's single writer gives. The aborted one
/// (SQLSTATE 40001, or 40P01 for a deadlock) is run again from the start on a fresh snapshot, a few
/// times with a growing random pause, so callers see what they would see on SQLite. Explicit row
/// locks would do too, but every rule would need its own `FOR UPDATE` on the right rows, and a
/// forgotten one would break a rule silently; with SERIALIZABLE a forgotten case costs a retry.
/// Reads run at REPEATABLE READ, READ ONLY: one snapshot for the whole body, and no read-only
/// transaction is ever aborted for serialization.
public final class PostgresDatabase: SQLDatabase {
    public let dialect = SQLDialect.postgres
    /// How many connections (and threads) serve transactions.
    public let poolSize: Int
    /// How write transactions keep the rules (see the type's comment).
    public let isolation: WriteIsolation

    public enum WriteIsolation: String, Sendable {
        /// SERIALIZABLE, retried on conflict: no rule needs anything of its own.
        case serializable
        /// READ COMMITTED, with each rule taking ``SQLSession/lock(_:ids:)`` on the rows it
        /// checks before checking them; conflicts wait instead of failing.
        case readCommittedWithLocks
    }
    let configuration: PostgresConnection.Configuration
    let logger: Logger
    private let queue: JobQueue
    private let workers: [Worker]
    /// Serialization failures retried, for `/metrics`.
    public var retries: Int { retryCount.load(ordering: .relaxed) }
    private let retryCount = Atomic<Int>(0)
    private let busyCount = Atomic<Int>(0)

    /// The connection pool now, for `/metrics`: its connections, how many run a transaction, how
    /// many transactions wait for one, and the conflicts retried since start.
    public struct PoolFigures: Sendable, Equatable {
        public var connections: Int
        public var busy: Int
        public var waiting: Int
        public var retries: Int
    }

    public var poolFigures: PoolFigures {
        PoolFigures(connections: workers.count, busy: busyCount.load(ordering: .relaxed), waiting: queue.count, retries: retries)
    }

    /// The most times a conflicting write is tried before its caller is told to try again.
    public static let maximumAttempts = 12

    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or with
    /// `?host=/run/postgresql` for a socket) and checks the connection works.
    public init(url: String, poolSize: Int = 8, isolation: WriteIsolation = .serializable, connectTimeout: Duration = .seconds(10),
                logger: Logger = Logger(label: "nearplay.lobby.postgres")) async throws {
        var configuration = try Self.configuration(from: url)
        configuration.options.connectTimeout = .seconds(Int64(connectTimeout.components.seconds))
        self.configuration = configuration
        self.poolSize = max(1, poolSize)
        self.isolation = isolation
        self.logger = logger
        let queue = JobQueue()
        self.queue = queue
        workers = (0..<max(1, poolSize)).map { Worker(index: $0, queue: queue, configuration: configuration, logger: logger) }
        for worker in workers { worker.start() }
        // A first connection now, so a wrong address fails at start rather than at the first request.
        do {
            _ = try await read { db in try db.fetchValue(Int64.self, "SELECT 1") }
        } catch {
            try? await close()
            throw error
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await run { [self] connection in
            try connection.transaction(begin: isolation == .serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN ISOLATION LEVEL READ COMMITTED",
                                       attempts: Self.maximumAttempts,
                                       onRetry: { retryCount.add(1, ordering: .relaxed) }, body)
        }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await run { connection in
            try connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", attempts: 1, onRetry: {}, body)
        }
    }

    /// Applies migrations in one transaction under a transaction-scoped advisory lock: several
    /// instances starting together queue on the lock, and each one after the first finds the
    /// migrations recorded in `schema_migrations` and applies nothing.
    public func migrate(_ migrations: [SQLMigration]) async throws {
        try await run { connection in
            try connection.transaction(begin: "BEGIN", attempts: 1, onRetry: {}) { db in
                try db.execute("SELECT pg_advisory_xact_lock(?)", Self.migrationLockKey)
                try db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (identifier TEXT PRIMARY KEY, appliedAt DOUBLE PRECISION NOT NULL)", [SQLValue]())
                let applied = Set(try db.fetchAll("SELECT identifier FROM schema_migrations", [SQLValue]()).compactMap { try? $0.get(0, as: String.self) })
                for migration in migrations where !applied.contains(migration.name) {
                    try db.executeScript(migration.postgres)
                    try db.execute("INSERT INTO schema_migrations (identifier, appliedAt) VALUES (?, ?)", migration.name, Date().timeIntervalSince1970)
                }
            }
        }
    }

    /// The advisory lock that migrations take ("Nearplay" in ASCII).
    static let migrationLockKey: Int64 = 0x4E65_6172_706C_6179

    /// Takes no more work; each connection closes once its thread has finished the job it runs.
    public func beginClosing() { queue.close() }

    public func close() async throws {
        queue.close()
        await withTaskGroup(of: Void.self) { group in
            for worker in workers { group.addTask { await worker.finished() } }
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable (WorkerConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = queue.enqueue { [self] connection in
                busyCount.add(1, ordering: .relaxed)
                defer { busyCount.subtract(1, ordering: .relaxed) }
                do {
                    guard let connection else { throw SQLError.closed }
                    continuation.resume(returning: try work(connection))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            if !accepted { continuation.resume(throwing: SQLError.closed) }
        }
    }

    // MARK: - Addresses

    /// Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than
    /// a SQLite file.
    public static func isURL(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    static func configuration(from url: String) throws -> PostgresConnection.Configuration {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme.lowercased())
        else { throw SQLError.badURL(url, reason: "it does not start with postgres://") }
        guard let user = components.user, !user.isEmpty else { throw SQLError.badURL(url, reason: "it names no user") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty else { throw SQLError.badURL(url, reason: "it names no database") }
        let password = components.password
        let port = components.port ?? 5432
        if let socketFolder = components.queryItems?.first(where: { $0.name == "host" })?.value, socketFolder.hasPrefix("/") {
            return .init(unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        guard let host = components.host, !host.isEmpty else {
            throw SQLError.badURL(url, reason: "it names no host (for a socket, add ?host=/run/postgresql)")
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
}

// MARK: - Workers

/// Jobs waiting for a worker; a closed queue takes no more and hands the workers nil.
private final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable (WorkerConnection?) -> Void
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var closed = false

    func enqueue(_ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Jobs waiting for a worker now.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count - head
    }

    /// The next job, waiting for one; nil once closed and empty.
    func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count && !closed { condition.wait() }
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head > 256 && head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A thread that owns one connection and runs jobs on it, reconnecting after it breaks.
private final class Worker: @unchecked Sendable {
    let index: Int
    let queue: JobQueue
    let configuration: PostgresConnection.Configuration
    let logger: Logger
    private let done = Mutex<[CheckedContinuation<Void, Never>]?>([])

    init(index: Int, queue: JobQueue, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.index = index
        self.queue = queue
        self.configuration = configuration
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in
            let connection = WorkerConnection(id: index, configuration: configuration, logger: logger)
            while let job = queue.next() { job(connection) }
            connection.close()
            let waiting = done.withLock { waiting in
                defer { waiting = nil }
                return waiting ?? []
            }
            for continuation in waiting { continuation.resume() }
        }
        thread.name = "nearplay-postgres-\(index)"
        thread.start()
    }

    func finished() async {
        await withCheckedContinuation { continuation in
            let ended = done.withLock { waiting -> Bool in
                guard waiting != nil else { return true }
                waiting!.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }
}

/// One connection, used by one thread only.
final class WorkerConnection: @unchecked Sendable {
    let id: Int
    let configuration: PostgresConnection.Configuration
    let logger: Logger
    private var connection: PostgresConnection?
    /// Statements with their placeholders numbered, by the text the lobby wrote.
    private var numbered: [String: String] = [:]

    init(id: Int, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.id = id
        self.configuration = configuration
        self.logger = logger
    }

    func close() {
        try? connection?.close().wait()
        connection = nil
    }

    private func open() throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger
            ).wait()
            self.connection = connection
            return connection
        } catch {
            throw SQLError.connection(Self.describe(error))
        }
    }

    /// Runs `body` in a transaction begun with `begin`, again from the start after a
    /// serialization failure or deadlock, up to `attempts` times in all.
    func transaction<T>(begin: String, attempts: Int, onRetry: () -> Void, _ body: (any SQLSession) throws -> T) throws -> T {
        var attempt = 1
        while true {
            let connection = try open()
            let session = PostgresSession(worker: self, connection: connection)
            do {
                try session.execute(begin, [])
                let value = try body(session)
                try session.execute("COMMIT", [])
                return value
            } catch {
                if !connection.isClosed { _ = try? session.execute("ROLLBACK", []) }
                let state = Self.sqlState(of: error)
                guard state == "40001" || state == "40P01" else {
                    if connection.isClosed { self.connection = nil }
                    throw error
                }
                guard attempt < attempts else { throw SQLError.tooManyConflicts(attempts: attempts) }
                onRetry()
                // A pause that grows with each conflict and differs between the conflicting
                // transactions, so they stop meeting.
                usleep(UInt32.random(in: 0...UInt32(min(50_000, 500 << min(attempt, 7)))))
                attempt += 1
            }
        }
    }

    func numbering(_ sql: String) -> String {
        if let known = numbered[sql] { return known }
        let translated = SQLText.numberingPlaceholders(sql).sql
        if numbered.count > 2_000 { numbered.removeAll() }
        numbered[sql] = translated
        return translated
    }

    static func sqlState(of error: any Error) -> String? {
        switch error {
        case let error as PSQLError: error.serverInfo?[.sqlState]
        case let error as SQLError:
            switch error {
            case .server(let code, _, _): code
            case .constraint: "23000"
            default: nil
            }
        default: nil
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return String(reflecting: error.code)
        }
        return "\(error)"
    }
}

/// One transaction's statements on a worker's connection.
struct PostgresSession: SQLSession {
    let worker: WorkerConnection
    let connection: PostgresConnection
    var dialect: SQLDialect { .postgres }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try run(sql, arguments).metadata.rows ?? 0
    }

    func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let result = try run(sql, arguments)
        guard let first = result.rows.first else { return [] }
        let columns = first.map(\.columnName)
        return try result.rows.map { row in SQLRow(columns: columns, values: try row.map(Self.value)) }
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> PostgresQueryResult {
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .real(let value): binds.append(value)
            case .text(let value): binds.append(value)
            case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
            }
        }
        let statement = worker.numbering(sql)
        do {
            let future: EventLoopFuture<PostgresQueryResult> = connection.query(PostgresQuery(unsafeSQL: statement, binds: binds), logger: worker.logger)
            return try future.wait()
        } catch let error as PSQLError {
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? String(reflecting: error.code)
            let kind: SQLError.ConstraintKind? = switch state {
            case "23505": .unique
            case "23503": .foreignKey
            case "23514": .check
            case "23502": .notNull
            default: state.hasPrefix("23") ? .other : nil
            }
            if let kind { throw SQLError.constraint(kind: kind, message: message) }
            if state.isEmpty { throw SQLError.connection(message) }
            throw SQLError.server(code: state, message: message, statement: sql)
        }
    }

    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .float4, .float8: return .real(try cell.decode(Double.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
        case .numeric:
            // SUM and AVG over BIGINT are NUMERIC; the lobby's sums fit a Double exactly.
            let text = PostgresData(type: .numeric, formatCode: cell.format, value: cell.bytes).numeric?.string ?? ""
            if let integer = Int64(text) { return .integer(integer) }
            return Double(text).map(SQLValue.real) ?? .text(text)
        default: return .text(try cell.decode(String.self))
        }
    }
}
