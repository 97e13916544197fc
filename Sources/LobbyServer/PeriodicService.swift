import Lobby
import Logging
import ServiceLifecycle

/// Runs a pass of some duty every `interval` beside the server, until the server shuts down. With
/// several instances on one PostgreSQL, one of them at a time runs it (the store's lease `lease`).
///
/// A pass that throws is logged and the next one runs on time. The loop ends when the group shuts
/// down gracefully or is cancelled, also in the middle of the sleep between two passes (a cancelled
/// sleep ends the loop rather than starting another pass).
struct PeriodicService: Service {
    let store: LobbyStore
    /// The lease's name; the lease gauge's `lease` dimension says it too.
    let lease: String
    let interval: Duration
    let logger: Logger
    /// Said before the error a failed pass threw, e.g. "Settling tournaments failed".
    let failure: String
    let pass: @Sendable () async throws -> Void

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            await store.exclusively(lease) { await repeatPasses() }
        }
    }

    private func repeatPasses() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await pass()
            } catch {
                logger.error("\(failure): \(error)")
            }
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
        }
    }
}
