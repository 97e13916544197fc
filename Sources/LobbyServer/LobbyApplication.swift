import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Lobby
import Logging
import NIOCore
import ServiceLifecycle

/// The lobby as a runnable Hummingbird application: the router, WebSocket upgrades, and the
/// invitation-expiry sweeper, the tournament scheduler, the location screens' readers and the
/// crowd calibration's solve as services beside the server. Running it (`runService()`) handles
/// SIGTERM and SIGINT by draining in-flight requests for at most `limits.drainTimeout`, then
/// closing every connection; close the store after it returns.
///
/// Every connection is held to `limits` (see ``ConnectionLimits``): timeouts for heads, bodies and
/// idle keep-alive, a share per client address, a total, and a 4xx answer to what cannot be parsed.
public func buildLobbyApplication(
    store: LobbyStore, host: String, port: Int, logger: Logger,
    throttle: SignInThrottle = SignInThrottle(), metrics: LobbyMetrics = LobbyMetrics(),
    limits: ConnectionLimits = ConnectionLimits(),
    onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let screenFeeds = ScreenFeeds(store: store, templates: WebTemplates())
    let router = buildLobbyRouter(store: store, throttle: throttle, metrics: metrics, trustedProxies: limits.trustedProxies,
                                  screenFeeds: screenFeeds)
    let webSocketResponder = router.buildResponder()
    var services: [any Service] = [PeriodicService.expirySweeper(store: store, logger: logger),
                                   PeriodicService.tournamentScheduler(store: store, logger: logger), screenFeeds]
    if let calibrator = PeriodicService.crowdCalibrator(store: store, logger: logger) { services.append(calibrator) }
    let table = ConnectionTable(maximumPerAddress: limits.maximumConnectionsPerAddress, unlimited: limits.trustedProxies)
    let channel = HTTP1WebSocketUpgradeChannel.Configuration(
        http1: .init(
            idleTimeout: TimeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.maximumHeadBytes, maxHeaderListSize: limits.maximumHeadBytes, maxHeaderFieldCount: 100)),
        ws: .init())
    let server = HTTPServerBuilder { responder in
        GuardedChildChannel(
            inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channel),
            limits: limits, table: table)
    }
    return Application(
        router: router,
        server: server,
        configuration: .init(
            address: .hostname(host, port: port), serverName: "nearplay-lobby",
            availableConnectionsDelegate: .maximum(limits.maximumConnections, logger: logger)),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
        logger: logger
    )
}

extension PeriodicService {
    /// Expires invitations past their 24 h on a timer, so their games open (or are cancelled) and the
    /// players hear of it even when nobody calls the API; forgets request keys past their lifetime and
    /// events past their retention. With several instances on one PostgreSQL, one of them at a time
    /// runs it (a lease).
    static func expirySweeper(store: LobbyStore, logger: Logger, interval: Duration = .seconds(30)) -> PeriodicService {
        PeriodicService(store: store, lease: "expiry-sweeper", interval: interval, logger: logger,
                        failure: "Expiring invitations or old request keys failed") { [store] in
            try await store.expireInvitations()
            try await store.pruneRequestKeys()
            try await store.pruneEvents()
            try await store.pruneCrowdExchanges()
        }
    }

    /// Solves the crowd calibration (``LobbyStore/solveCrowdCalibration()``) every
    /// ``LobbyConfiguration/crowdCalibrationInterval``, the first time as the server starts; nil
    /// when that is 0 (turned off). The solve logs one line per pass. With several instances on
    /// one PostgreSQL, one of them at a time runs it (a lease).
    static func crowdCalibrator(store: LobbyStore, logger: Logger) -> PeriodicService? {
        let interval = store.configuration.crowdCalibrationInterval
        guard interval > 0 else { return nil }
        return PeriodicService(store: store, lease: "crowd-calibration", interval: .milliseconds(Int64((interval * 1000).rounded())),
                               logger: logger, failure: "Solving the crowd calibration failed") { [store] in
            try await store.solveCrowdCalibration()
        }
    }
}
