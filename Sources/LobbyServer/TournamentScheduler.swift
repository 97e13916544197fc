import Lobby
import Logging
import ServiceLifecycle

extension PeriodicService {
    /// Starts each location's tournaments as their windows open and closes them as they end, on a
    /// timer beside the server, so a tournament is decided on time even when nobody asks about it.
    /// Requests that touch tournaments settle due ones themselves too, so none is seen running late.
    /// With several instances on one PostgreSQL, one of them at a time runs it (a lease).
    static func tournamentScheduler(store: LobbyStore, logger: Logger, interval: Duration = .seconds(15)) -> PeriodicService {
        PeriodicService(store: store, lease: "tournament-scheduler", interval: interval, logger: logger,
                        failure: "Settling tournaments failed") { [store, logger] in
            let sweep = try await store.settleTournaments()
            for outcome in sweep.closed {
                logger.info("tournament \(outcome.tournament) at location \(outcome.location) closed: \(outcome.ranked.count) entries, winner \(outcome.winner.map(String.init) ?? "none")")
            }
            if sweep.created > 0 { logger.info("\(sweep.created) tournaments started") }
        }
    }
}
