import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Proximity
import Radio
import Ranging
import SensorSamples
import ServiceLifecycle
import UnixSignals

/// The agent: one player's device, joined up. It advertises the player's beacon identity, scans,
/// ranges, resolves identities to players, follows the lobby's events, sends what must reach the
/// lobby through a durable queue, plays rounds, and answers the CLI on a local socket.
///
/// Each long-lived piece is a swift-service-lifecycle service in one `ServiceGroup`; SIGTERM or
/// SIGINT stops advertising and scanning first, then the queue gets up to 3 s to flush, and
/// ``run()`` returns.
public final class Agent: Sendable {
    public let configuration: AgentConfiguration
    public let identity: PlayerIdentity
    public let store: AgentStore
    public let events: AgentEventBus
    public let lobby: LobbyClient
    public let resolver: IdentityResolver
    public let outbox: Outbox
    public let nearby: NearbyPlayers
    public let locations: NearbyLocations
    /// The distance model ranging follows: this device's own, or a calibrated site's in range.
    public let siteRanging: SiteRanging
    public let follower: LobbyEventsFollower
    public let session: GameSession
    public let radio: AgentRadio
    public let socketPath: String
    /// What this device's rotating beacon identity is derived from; nil when the lobby never
    /// gave one (then it advertises ``identity``'s static beacon).
    public let rotation: RotationKey?
    /// The device's sensor calibration, stored at the lobby at start so it scores our rounds alike.
    public let calibration: SensorCalibration?
    let logger: Logger
    /// Where every piece of the agent takes its time from (``AgentClock``).
    public let clock: AgentClock
    /// Counts for `nearplay metrics` (``metricsText()``).
    public let metrics = AgentMetrics()
    /// How long the queue may take to flush at shutdown.
    public static let flushDeadline: Duration = .seconds(3)

    /// Prepares an agent: opens its store and learns (or remembers) who it runs as. Nothing
    /// runs until ``run()``.
    ///
    /// - Parameters:
    ///   - credentialsPath: where `credentials` came from: the beacon key the lobby gives is kept
    ///     there when it is new.
    ///   - clock: the time of every piece of the agent: its timers, its stamps, the pipeline's ticks.
    public init(configuration: AgentConfiguration, credentials: Credentials, radio: AgentRadio, rounds: any RoundPlaying,
                calibration: SensorCalibration? = nil, paths: AgentPaths = AgentPaths(), credentialsPath: String? = nil,
                clock: AgentClock = .system, logger: Logger = Logger(label: "nearplay.agent")) async throws(AgentError) {
        self.configuration = configuration
        self.clock = clock
        self.calibration = calibration
        self.radio = radio
        self.logger = logger
        let lobbyURL = configuration.lobby ?? credentials.lobby
        var lobby = LobbyClient(baseURL: lobbyURL).authenticated(credentials.token)
        // Fail fast when the lobby is away: the queue and the cache carry on without it.
        lobby.timeout = .seconds(5)
        self.lobby = lobby
        store = try AgentStore(directory: configuration.stateDirectory ?? paths.stateDirectory)
        socketPath = configuration.socket ?? paths.socket
        events = AgentEventBus()
        identity = try await Self.whoAmI(lobby: lobby, store: store, username: credentials.username, clock: clock, logger: logger)
        rotation = await Self.rotationKey(lobby: lobby, credentials: credentials, path: credentialsPath, clock: clock, logger: logger)
        resolver = IdentityResolver(store: store, lobby: lobby, ttl: configuration.identityCacheSeconds,
                                    negativeTTL: configuration.unknownIdentityCacheSeconds, now: { clock.now.timeIntervalSince1970 })
        let outbox = Outbox(store: store, lobby: lobby, events: events, clock: clock)
        self.outbox = outbox
        // A peer's reading of us arrives with its encounter reports: a few may be missed.
        nearby = NearbyPlayers(resolver: resolver, events: events, peerReadingMaxAge: max(30, 3 * configuration.encounterReportSeconds),
                               clock: clock) { sightings in
            _ = try? await outbox.enqueue(.encounters(sightings))
        }
        var deployment: UUID?
        if case let .iBeacon(uuid, _, _) = identity.beacon { deployment = UUID(uuidString: uuid.description) }
        if let rotation { deployment = rotation.uuid }
        let siteRanging = SiteRanging(logger: logger)
        self.siteRanging = siteRanging
        locations = NearbyLocations(lobby: lobby, events: events, deployment: deployment, locationUUID: rotation?.locationUUID, clock: clock,
                                    onFirstSeen: { sightings in
            _ = try? await outbox.enqueue(.encounters(sightings))
        }, onSite: { siteRanging.setSite($0) })
        let session = GameSession(store: store, lobby: lobby, outbox: outbox, events: events, username: identity.username, player: rounds, clock: clock)
        self.session = session
        let autoPlay = configuration.autoPlay
        follower = LobbyEventsFollower(store: store, lobby: lobby, events: events, nearby: nearby, clock: clock) { game in
            if autoPlay { await session.playAll(game: game) }
        }
        if let rotation {
            await nearby.setOwnIdentities(Self.ownIdentities(rotation, at: clock.now))
        } else {
            await nearby.setOwnIdentity(identity.beacon)
        }
    }

    /// The key the lobby gives now, kept with the credentials when it is new; the one kept
    /// there when the lobby cannot be asked; nil when neither is known.
    static func rotationKey(lobby: LobbyClient, credentials: Credentials, path: String?, clock: AgentClock, logger: Logger) async -> RotationKey? {
        do {
            guard let key = RotationKey(try await lobby.beaconKey(), receivedAt: clock.now) else {
                logger.error("the lobby gave a beacon key this agent cannot use; advertising the static identity")
                return credentials.beaconKey
            }
            if key != credentials.beaconKey, let path {
                var updated = credentials
                updated.beaconKey = key
                do { try updated.save(to: path) } catch { logger.notice("could not keep the beacon key in \(path): \(error)") }
            }
            return key
        } catch {
            if credentials.beaconKey == nil {
                logger.notice("the lobby gave no beacon key (\(error)); advertising the static identity until it does")
            }
            return credentials.beaconKey
        }
    }

    /// This device's identities in the period of `date` and its neighbours: never shown as players.
    static func ownIdentities(_ key: RotationKey, at date: Date) -> Set<BeaconFrames.BeaconIdentity> {
        let beacon = key.beacon(.player)
        let index = beacon.index(at: date)
        return Set(((index - 1)...(index + 1)).map { beacon.beaconIdentity(period: $0) })
    }

    /// Who the token belongs to and which beacon identity the lobby gave them; remembered in the
    /// store so an agent started while the lobby is away still advertises.
    static func whoAmI(lobby: LobbyClient, store: AgentStore, username: String, clock: AgentClock, logger: Logger) async throws(AgentError) -> PlayerIdentity {
        // 0.25 s doubling: five waits, the last 4 s, before an agent that never ran gives up.
        var backoff = Backoff()
        for attempt in 1...6 {
            do {
                let me = try await lobby.me()
                guard let beacon = me.beacon.beaconIdentity else {
                    throw AgentError("The lobby gave \(me.username) a beacon identity out of range.", code: "badResponse")
                }
                let identity = PlayerIdentity(username: me.username, beacon: beacon)
                if let data = try? JSONEncoder().encode(identity) { try? store.setSetting("me", String(decoding: data, as: UTF8.self)) }
                return identity
            } catch let error as LobbyClientError where error.status == 401 {
                throw AgentError("The lobby no longer accepts the stored session for \(username): run `nearplay login` again.", code: "notLoggedIn")
            } catch let error as AgentError {
                throw error
            } catch {
                if let text = try? store.setting("me"), let identity = try? JSONDecoder().decode(PlayerIdentity.self, from: Data(text.utf8)) {
                    logger.notice("the lobby is unreachable (\(error)); running as \(identity.username) from memory")
                    return identity
                }
                if attempt == 6 {
                    throw AgentError("Cannot reach the lobby at \(lobby.baseURL) (\(error)), and this agent has never run before: check the address and that the lobby is up.", code: "lobbyUnreachable")
                }
                do {
                    try await clock.sleep(for: backoff.delay)
                } catch {
                    throw AgentError("The agent was stopped while it waited for the lobby at \(lobby.baseURL) to answer; start it again when the lobby is up.",
                                     code: "lobbyUnreachable")
                }
                backoff.advance()
            }
        }
        throw AgentError("Cannot reach the lobby at \(lobby.baseURL).", code: "lobbyUnreachable")
    }

    /// Runs every service until SIGTERM/SIGINT (or the task is cancelled), then shuts down in
    /// order: local API, radio, lobby events, encounter reports, and last the queue's flush.
    public func run(shutdownSignals: [UnixSignal] = [.sigterm, .sigint]) async throws {
        let api = LocalAPIServer(path: socketPath, events: { [events] recent in events.subscribe(recent: recent) }) { [self] request in
            await self.answer(request)
        }
        try api.start()
        defer { api.stop() }
        if let calibration, calibration != SensorCalibration() {
            do {
                try await lobby.setCalibration(calibration)
            } catch {
                logger.notice("could not store this device's sensor calibration at the lobby (\(error)); rounds may be refused until it is")
            }
        }
        logger.notice("agent running as \(identity.username) (\(identity.beacon)) on \(radio.description); local API on \(socketPath)")
        let services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: QueueService(outbox: outbox, logger: logger)),
            // After the queue, so they stop before it: what they report goes through it.
            .init(service: TaskService { [nearby] in await nearby.run() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [locations] in await locations.run() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.tellTimeZone() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [follower] in await follower.run() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.reportEncounters() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.followRadioOffsets() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.notify() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.advertise() }, successTerminationBehavior: .ignore),
            .init(service: TaskService { [self] in await self.scan() }, successTerminationBehavior: .ignore),
        ]
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.gracefulShutdownSignals = shutdownSignals
        let group = ServiceGroup(configuration: configuration)
        try await group.run()
        events.finish()
    }

    // MARK: the services' work

    func scan() async {
        let ranging = rangingConfiguration()
        siteRanging.setOwn(ranging.distanceModel)
        await nearby.setRanging(ranging)
        let scanner = CountingScanner(base: radio.scanner, metrics: metrics)
        do {
            try await clock.timer.runProximity(scanner: scanner, configuration: ranging, distanceModel: siteRanging.distanceModel) {
                [nearby, locations, metrics] update in
                if update.isTick {
                    metrics.trackedBeacons.store(update.tracker.count, ordering: .relaxed)
                    metrics.tick()
                }
                // Location beacons go to the locations; everyone else's to the players.
                var atLocations: [ProximityEvent] = []
                var others = update.events
                if update.events.contains(where: { locations.isLocation($0.identity) }) {
                    atLocations = update.events.filter { locations.isLocation($0.identity) }
                    others = update.events.filter { !locations.isLocation($0.identity) }
                }
                if !atLocations.isEmpty { await locations.handle(atLocations) }
                let events = nearby.relevant(others)
                if !events.isEmpty { await nearby.handle(events, distanceModel: update.tracker.configuration.distanceModel) }
            }
        } catch is CancellationError {
        } catch {
            logger.error("the radio failed: \(error)")
        }
    }

    /// Tells the lobby this device's time zone, once: days, weeks and boards are counted in the
    /// player's zone, the device's.
    func tellTimeZone() async {
        do {
            _ = try await lobby.updateSettings(timeZone: TimeZone.current.identifier)
        } catch {
            logger.info("could not tell the lobby this device's time zone (\(error)); it counts your days in UTC until it can")
        }
    }

    func advertise() async {
        guard configuration.advertise, let advertiser = radio.advertiser else { return }
        do {
            if let rotation {
                // A new identity (and, where the radio chooses it, a new address) every period.
                let beacon = rotation.beacon(.player)
                let (nearby, metrics) = (nearby, metrics)
                // The rotation's callback is synchronous: the periods it names reach the players'
                // list through a child task, which ends with the advertising.
                let (rotations, rotated) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
                let clock = clock
                let payloads = beacon.payloads(now: clock.wallTime, sleep: { try await clock.sleep(for: .seconds($0)) }, onRotate: { index in
                    metrics.rotations.add(1, ordering: .relaxed)
                    rotated.yield(index)
                })
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        for await index in rotations {
                            await nearby.setOwnIdentities(Set(((index - 1)...(index + 1)).map { beacon.beaconIdentity(period: $0) }))
                        }
                    }
                    defer { rotated.finish() }
                    try await advertiser.advertise(rotating: payloads)
                }
                return
            }
            guard let payload = identity.advertisingPayload else { return }
            try await advertiser.advertise(payload)
        } catch is CancellationError {
        } catch {
            logger.error("cannot advertise \(identity.beacon): \(error)")
        }
    }

    func reportEncounters() async {
        while true {
            do { try await clock.sleep(for: .seconds(configuration.encounterReportSeconds)) } catch { return }
            let sightings = await nearby.encounterSightings() + locations.encounterSightings()
            if !sightings.isEmpty { _ = try? await outbox.enqueue(.encounters(sightings)) }
        }
    }

    /// Asks the lobby for this device's radio offsets (calibration from the crowd) now and every
    /// ``radioOffsetsRefresh`` after: the lobby solves them again every few minutes from the
    /// readings players exchange. A lobby away keeps the offsets last known.
    func followRadioOffsets() async {
        var known: RadioOffsets?
        while true {
            do {
                let offsets = try await lobby.radioOffsets().map(RadioOffsets.init)
                if offsets != known {
                    if let offsets {
                        logger.notice("""
                            the lobby solved this device's radio offsets from the players around it: transmit                             \(String(format: "%+.1f ± %.1f", offsets.transmit, offsets.transmitError)) dB, receive                             \(String(format: "%+.1f ± %.1f", offsets.receive, offsets.receiveError)) dB; distances are corrected with them
                            """)
                    }
                    known = offsets
                    await nearby.setOwnRadioOffsets(offsets)
                }
            } catch {
                logger.info("could not ask the lobby for this device's radio offsets (\(error)); using those last known")
            }
            do { try await clock.sleep(for: .seconds(Self.radioOffsetsRefresh)) } catch { return }
        }
    }

    /// Seconds between asking the lobby for this device's radio offsets: the lobby's solve runs
    /// every 10 minutes by default.
    static let radioOffsetsRefresh = 600.0

    func notify() async {
        guard configuration.notifications else { return }
        await Notifier(username: identity.username).run(events.subscribe())
    }
}

extension Clock where Duration == Swift.Duration {
    /// Runs the proximity pipeline on this clock: a method, so the agent's `any Clock` opens to
    /// the concrete clock `LiveProximity` is generic over.
    fileprivate func runProximity(scanner: any AdvertisementScanner, configuration: RangingConfiguration,
                                  distanceModel: DistanceModelSwitch?, _ handle: (ProximityUpdate) async -> Void) async throws {
        try await LiveProximity(scanner: scanner, configuration: configuration, clock: self, distanceModel: distanceModel).run(handle)
    }
}

/// A service that runs `work` until graceful shutdown cancels it.
struct TaskService: Service {
    let work: @Sendable () async -> Void

    init(_ work: @escaping @Sendable () async -> Void) { self.work = work }

    func run() async throws {
        await cancelWhenGracefulShutdown { await work() }
    }
}

/// The outgoing queue: sends until shutdown, then flushes for up to ``Agent/flushDeadline``.
struct QueueService: Service {
    let outbox: Outbox
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { await outbox.run() }
        let left = await outbox.flush(within: Agent.flushDeadline)
        if left > 0 { logger.notice("\(left) operations wait in the queue for the next start") }
    }
}
