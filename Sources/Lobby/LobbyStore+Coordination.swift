import CoreMetrics
import LobbyDatabase

extension LobbyStore {
    /// Runs `duty` where it must run once however many instances share the store: on SQLite (one
    /// process owns the file) right away, for as long as the calling task lives; on PostgreSQL
    /// only while this instance holds the lease `name` (``PostgresDatabase/holdingLease``), which
    /// passes to another instance within `interval` of this one's death. `duty` is cancelled when
    /// the lease is lost and started again when it is won back.
    public func exclusively(_ name: String, interval: Duration = .seconds(1), _ duty: @escaping @Sendable () async -> Void) async {
        guard let postgres = database as? PostgresDatabase else { return await duty() }
        let held = Gauge(label: "nearplay_lobby_lease_held", dimensions: [("lease", name)], factory: metricsFactory)
        held.record(0)
        await postgres.holdingLease(name, interval: interval, onChange: { holding in held.record(holding ? 1 : 0) }, duty)
    }

    /// PostgreSQL's connection pool now; nil on SQLite.
    public var databasePool: PostgresDatabase.PoolFigures? { (database as? PostgresDatabase)?.poolFigures }

    /// Whether this is the PostgreSQL engine, where several instances may share the store.
    public var isShared: Bool { database.dialect == .postgres }
}
