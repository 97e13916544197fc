import ArgumentParser
import BeaconKeys
import Foundation
import Lobby
import LobbyDatabase
import LobbyServer
import Logging
import Minigames
import NIOCore
import NIOPosix
import ServiceLifecycle

/// `nearplay lobby serve`: the HTTP + WebSocket lobby on a SQLite file, or on a PostgreSQL
/// database that several instances share.
struct LobbyServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the lobby API (/v1) over HTTP, storing everything in a SQLite file or a PostgreSQL database.",
        discussion: """
            Prints "lobby listening on http://HOST:PORT" once it accepts connections (with --port 0 \
            the system picks the port). SIGTERM or Ctrl-C drains in-flight requests for at most \
            2 s, closes every connection, then closes the database cleanly.
            """
    )

    @Option(help: "The SQLite database file; created and migrated if missing.")
    var db = "./nearplay-lobby.sqlite"

    @Option(help: ArgumentHelp(
        "Where the lobby keeps its state, instead of --db: a PostgreSQL database (postgres://USER@HOST[:PORT]/DATABASE, "
            + "or postgres://USER@/DATABASE?host=/run/postgresql for a socket), which any number of instances may share, "
            + "or a SQLite file path. Migrated if needed, once however many instances start together.",
        valueName: "url|file"))
    var database: String?

    @Option(help: "PostgreSQL connections this instance keeps (its transactions at once).")
    var poolSize = 8

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port to listen on (0: any free port).")
    var port = 8080

    @Option(help: "The bcrypt cost of new password hashes (4…31).")
    var bcryptCost: UInt8 = 12

    @Option(help: ArgumentHelp(
        "Throttle sign-ins and registrations per account and per client address (429 with Retry-After); "
            + "off only for tests and benchmarks that register many players from one address.",
        valueName: "on|off"))
    var signInThrottle: Switch = .on

    enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

    @Option(help: ArgumentHelp(
        "The minigames new games' rounds are drawn from, comma-separated (default: all).",
        valueName: MinigameCatalog.names.map(\.rawValue).joined(separator: ",")))
    var minigames: String?

    @Option(help: ArgumentHelp(
        "How long each rotating beacon identity lasts, in seconds: players and locations advertise a new one every period; "
            + "agents and beacons read it from the lobby.",
        valueName: "seconds"))
    var rotationPeriod = RotationPeriod.standard.seconds

    @Option(help: ArgumentHelp(
        "How long after the upgrade to rotating identities the old static ones still resolve, in days (0: not at all).",
        valueName: "days"))
    var staticIdentityGrace: Double = 14

    @Option(help: ArgumentHelp(
        "How often the lobby solves every player's radio offsets from the two-way readings players report, in seconds (0: never).",
        valueName: "seconds"))
    var crowdCalibrationInterval: Double = 600

    @Option(help: ArgumentHelp(
        "At most one two-way exchange per pair of players is kept for the crowd calibration in this many seconds.",
        valueName: "seconds"))
    var crowdExchangeSpacing: Double = 60

    @Option(help: ArgumentHelp(
        "New locations one account may register in 24 hours (an operator placing a hall's beacons needs one per beacon).",
        valueName: "count"))
    var locationsPerDay: Int = 5

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp(
        "The IP address of a reverse proxy in front of this lobby (repeat for several): its connections have no per-address "
            + "limit, and the client address sign-in throttling counts is read from the X-Forwarded-For it adds.",
        valueName: "address"))
    var trustedProxies: [String] = []

    /// The `--minigames` list in the catalog's spelling.
    private func enabledMinigames() throws -> [MinigameName] {
        guard let minigames else { return MinigameCatalog.names }
        let names = minigames.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { MinigameName($0) }
        do {
            return try LobbyConfiguration.minigames(names)
        } catch let error as LobbyError {
            throw ValidationError("--minigames: " + error.message.replacingOccurrences(of: "enabledMinigames: ", with: ""))
        }
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port).") }
        guard (1...200).contains(poolSize) else { throw ValidationError("--pool-size must be 1…200, got \(poolSize).") }
        guard (4...31).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be 4…31, got \(bcryptCost).") }
        _ = try enabledMinigames()
        guard rotationPeriod >= 1 else { throw ValidationError("--rotation-period must be at least 1 s, got \(rotationPeriod).") }
        guard staticIdentityGrace.isFinite, staticIdentityGrace >= 0 else {
            throw ValidationError("--static-identity-grace must be 0 days or more, got \(staticIdentityGrace).")
        }
        guard crowdCalibrationInterval.isFinite, crowdCalibrationInterval >= 0 else {
            throw ValidationError("--crowd-calibration-interval must be 0 s (never) or more, got \(crowdCalibrationInterval).")
        }
        guard (1...LocationBeacon.maximumLocations).contains(locationsPerDay) else {
            throw ValidationError("--locations-per-day must be 1 to \(LocationBeacon.maximumLocations), got \(locationsPerDay).")
        }
        guard crowdExchangeSpacing.isFinite, crowdExchangeSpacing >= 0 else {
            throw ValidationError("--crowd-exchange-spacing must be 0 s or more, got \(crowdExchangeSpacing).")
        }
        for proxy in trustedProxies where (try? SocketAddress(ipAddress: proxy, port: 0)) == nil {
            throw ValidationError("--trusted-proxy takes an IP address (127.0.0.1, ::1), got \"\(proxy)\"; give each proxy its own --trusted-proxy.")
        }
    }

    func run() async throws {
        // Swift concurrency on NIO's event loops: a request no longer hops between an event loop and
        // the cooperative pool on its way in and out (about a fifth less CPU per request in our load runs).
        // Must happen before anything else uses concurrency's global executor.
        let takenOver = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        var logger = Logger(label: "nearplay.lobby") { LineLogHandler(label: $0) }
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        if !takenOver {
            logger.notice("Swift concurrency keeps its own threads (the event loops could not take over); requests cost more CPU.")
        }
        let metrics = LobbyMetrics()
        let store: LobbyStore
        do {
            var configuration = LobbyConfiguration(enabledMinigames: try enabledMinigames(), bcryptCost: bcryptCost)
            configuration.rotationPeriod = RotationPeriod(seconds: rotationPeriod) ?? .standard
            configuration.staticIdentityGrace = staticIdentityGrace * 86400
            configuration.crowdCalibrationInterval = crowdCalibrationInterval
            configuration.crowdExchangeSpacing = crowdExchangeSpacing
            configuration.locationsPerDay = locationsPerDay
            store = try await LobbyStore.open(location, configuration: configuration, logger: logger, metrics: metrics.factory, poolSize: poolSize)
        } catch {
            let advice = PostgresDatabase.isURL(location)
                ? "check that the server runs, that the address, user and database are right, and that the user may create tables"
                : "check that its folder exists and is writable"
            FileHandle.standardError.write(Data("Error: Cannot open the lobby database \(Self.redacted(location)) (\(error)): \(advice).\n".utf8))
            throw ExitCode.failure
        }
        let host = host
        let throttle = SignInThrottle(signInThrottle == .on ? .init() : .unlimited)
        if signInThrottle == .off { logger.warning("sign-ins and registrations are not throttled (--sign-in-throttle off)") }
        var limits = ConnectionLimits().fitting(descriptorLimit: DescriptorLimit.raiseToHardLimit())
        // In the spelling the lobby compares peers in (::1, not 0:0:0:0:0:0:0:1).
        limits.trustedProxies = Set(trustedProxies.compactMap { try? SocketAddress(ipAddress: $0, port: 0).ipAddress })
        if limits.maximumConnections < ConnectionLimits().maximumConnections {
            logger.notice("""
                The descriptor limit allows \(limits.maximumConnections) connections, not \(ConnectionLimits().maximumConnections): \
                raise it (LimitNOFILE in the systemd unit, ulimit -n) for more.
                """)
        }
        let app = buildLobbyApplication(
            store: store, host: host, port: port, logger: logger, throttle: throttle, metrics: metrics, limits: limits
        ) { port in
            // Written straight to the file descriptor so it is never held in a buffer.
            FileHandle.standardOutput.write(Data("lobby listening on http://\(host):\(port)\n".utf8))
        }
        // The connections close themselves limits.drainTimeout after SIGTERM; the group's own
        // deadline is the backstop for anything else that does not stop.
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = limits.drainTimeout + .seconds(1)
        group.maximumCancellationDuration = .seconds(1)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            try? await Self.close(store)
            throw error
        }
        try await Self.close(store)
        logger.info("lobby stopped; database \(Self.redacted(location)) closed")
    }

    /// The store's location: --database when given, else --db.
    private var location: String { database ?? db }

    /// `location` without a password, for messages and logs.
    static func redacted(_ location: String) -> String {
        guard PostgresDatabase.isURL(location), var components = URLComponents(string: location), components.password != nil else { return location }
        components.password = "***"
        return components.string ?? location
    }

    /// Closes the store on a thread of its own: closing waits for the WAL checkpointer's task,
    /// which may need the very event loop thread (the global executor here) a blocking wait on
    /// it would hold; waiting there cost 5 s on every SIGTERM.
    private static func close(_ store: LobbyStore) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread { continuation.resume(with: Result { try store.close() }) }
        }
    }
}

