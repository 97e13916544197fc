import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Radio
import ServiceLifecycle
import UnixSignals

/// The location a beacon device marks, as the lobby registered it; remembered in the device's
/// state folder so that a restart while the lobby is away still advertises.
public struct MarkedLocation: Codable, Sendable, Equatable {
    public var lobby: String
    public var id: Int64
    public var name: String
    /// The location's static identity (the deployment UUID, major 0, its id): what it
    /// advertised before identities rotated, and still does when the lobby gave no key.
    public var beacon: BeaconFrames.BeaconIdentity
    /// What its rotating identity is derived from: only the lobby and this device hold it.
    public var beaconKey: RotationKey?

    public init(lobby: String, id: Int64, name: String, beacon: BeaconFrames.BeaconIdentity, beaconKey: RotationKey? = nil) {
        self.lobby = lobby
        self.id = id
        self.name = name
        self.beacon = beacon
        self.beaconKey = beaconKey
    }

    private enum CodingKeys: String, CodingKey { case lobby, id, name, beacon, beaconKey }

    /// Reads the remembered file, whose `beacon` is in the lobby's form (`uuid`, `major`, `minor`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        lobby = try c.decode(String.self, forKey: .lobby)
        id = try c.decode(Int64.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        guard let beacon = try c.decode(PlayerBeacon.self, forKey: .beacon).beaconIdentity else {
            throw DecodingError.dataCorruptedError(forKey: .beacon, in: c, debugDescription: "a beacon identity out of range")
        }
        self.beacon = beacon
        beaconKey = try c.decodeIfPresent(RotationKey.self, forKey: .beaconKey)
    }

    /// Writes `beacon` in the lobby's form, as the remembered files always had it.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(lobby, forKey: .lobby)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        guard let beacon = PlayerBeacon(beacon) else {
            throw EncodingError.invalidValue(beacon, .init(codingPath: c.codingPath + [CodingKeys.beacon], debugDescription: "not an iBeacon identity"))
        }
        try c.encode(beacon, forKey: .beacon)
        try c.encodeIfPresent(beaconKey, forKey: .beaconKey)
    }
}

/// `nearplay beacon --location NAME`: a stationary device that marks a multiplayer location. It
/// registers the location with the lobby under the operator's session (or re-uses the one
/// registered before under that name), then advertises the location's iBeacon identity (the
/// deployment UUID, major ``LocationBeacon/major``, minor = the location's id) until SIGTERM or
/// SIGINT, when it withdraws the advertisement and returns. Agents that come near report the
/// sighting to the lobby, which is what lets their players join the location's tournaments.
public struct LocationBeaconDevice: Sendable {
    public let location: MarkedLocation
    public let advertiser: any Advertiser
    /// The RSSI expected 1 m from the device, in dBm, as advertised.
    public var measuredPower: Int8 = -59
    /// The session the location was registered under: while advertising, the device tells the
    /// lobby so with it every ``onAirInterval`` (a sighting of the location proves presence only
    /// while it does). Nil: it advertises without telling, and nobody's sighting counts.
    public var session: Credentials?
    /// How often the device tells the lobby it is on the air; well inside the lobby's encounter
    /// window (10 minutes by default).
    public var onAirInterval: Duration = .seconds(60)
    /// A placed location's radio to listen with: the device then reports the owner's other
    /// beacons it hears on the same site every ``hearingInterval``, which calibrates the site's
    /// exponent (``BeaconHearings``). Nil, or without a session: it only advertises.
    public var scanner: (any AdvertisementScanner)?
    public var hearingInterval: Duration = .seconds(10)
    /// Where it stands: given again should the lobby forget (409 `locationNotPlaced`).
    public var placement: BeaconPlacement?
    let logger: Logger

    public init(location: MarkedLocation, advertiser: any Advertiser, session: Credentials? = nil, logger: Logger = Logger(label: "nearplay.beacon")) {
        self.location = location
        self.advertiser = advertiser
        self.session = session
        self.logger = logger
    }

    /// The file the location is remembered in, inside `stateDirectory`.
    public static func stateFile(_ stateDirectory: String, name: String) -> String {
        let safe = name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? String($0) : "_" }.joined()
        return stateDirectory + "/beacon-\(safe).json"
    }

    /// Registers (or re-uses) the location `name` with the lobby the credentials name and
    /// remembers it. When the lobby cannot be reached, a device that remembers this location from
    /// an earlier run (same name, same lobby) advertises it at once rather than wait; one that
    /// does not tries for about 8 s before it gives up.
    public static func register(
        name: String, timeZone: String? = nil, credentials: Credentials, lobbyURL: String? = nil, stateDirectory: String,
        logger: Logger = Logger(label: "nearplay.beacon")
    ) async throws(AgentError) -> MarkedLocation {
        let baseURL = lobbyURL ?? credentials.lobby
        var lobby = LobbyClient(baseURL: baseURL).authenticated(credentials.token)
        lobby.timeout = .seconds(5)
        let file = stateFile(stateDirectory, name: name)
        let remembered = FileManager.default.contents(atPath: file).flatMap { try? JSONDecoder().decode(MarkedLocation.self, from: $0) }
            .flatMap { $0.lobby == baseURL && $0.name.lowercased() == name.lowercased() ? $0 : nil }
        let attempts = remembered == nil ? 6 : 1
        var backoff = Backoff(first: .milliseconds(250), limit: .seconds(4))
        for attempt in 1...attempts {
            do {
                let registered = try await lobby.registerLocation(name: name, timeZone: timeZone)
                // Its rotating identity's key; one remembered for this location serves when the
                // lobby cannot give it now.
                let key = (try? await lobby.beaconKey(location: registered.id)).flatMap { RotationKey($0) }
                    ?? (remembered?.id == registered.id ? remembered?.beaconKey : nil)
                if key == nil {
                    logger.notice("location \(registered.name): the lobby gave no beacon key; advertising its static identity, which anyone who hears it can replay")
                }
                guard let beacon = registered.beacon.beaconIdentity else {
                    throw AgentError("The lobby gave location \(registered.name) a beacon identity out of range: \(registered.beacon).", code: "badResponse")
                }
                let marked = MarkedLocation(lobby: baseURL, id: registered.id, name: registered.name, beacon: beacon, beaconKey: key)
                try remember(marked, in: stateDirectory, file: file)
                return marked
            } catch let error as LobbyClientError where error.status == 401 {
                throw AgentError("The lobby no longer accepts the stored session of \(credentials.username): run `nearplay login` again.", code: "notLoggedIn")
            } catch let error as LobbyClientError {
                throw AgentError("The lobby refused the location \(name): \(error.message)", code: error.code.rawValue)
            } catch let error as AgentError {
                throw error
            } catch {
                if attempt < attempts {
                    try? await backoff.wait()
                    continue
                }
                if let remembered {
                    logger.notice("the lobby is unreachable (\(error)); advertising location \(remembered.name) (\(remembered.id)) from memory")
                    return remembered
                }
                throw AgentError("Cannot reach the lobby at \(baseURL) (\(error)), and this device has never registered \(name): check the address and that the lobby is up.",
                                 code: "lobbyUnreachable")
            }
        }
        throw AgentError("Cannot reach the lobby at \(baseURL).", code: "lobbyUnreachable")
    }

    /// Publishes the site profile calibrated at the location (`nearplay calibrate ranging` on
    /// this device): its exponent, the distances and the readings it used.
    public static func publishSiteProfile(
        exponent: Double, distances: [Double], readings: Int, of location: MarkedLocation, credentials: Credentials
    ) async throws(AgentError) -> LobbyLocation {
        var lobby = LobbyClient(baseURL: location.lobby).authenticated(credentials.token)
        lobby.timeout = .seconds(5)
        do {
            return try await lobby.publishSiteProfile(location: location.id, exponent: exponent, distances: distances, readings: readings)
        } catch let error as LobbyClientError {
            throw AgentError("The lobby refused the site profile of \(location.name): \(error.message)", code: error.code.rawValue)
        } catch {
            throw AgentError("Cannot reach the lobby at \(location.lobby) to publish the site profile of \(location.name) (\(error)).", code: "lobbyUnreachable")
        }
    }

    /// Places the location where its beacon stands, which its hearings of the owner's other
    /// beacons on that site need.
    public static func place(
        _ location: MarkedLocation, at placement: BeaconPlacement, credentials: Credentials
    ) async throws(AgentError) -> LobbyLocation {
        var lobby = LobbyClient(baseURL: location.lobby).authenticated(credentials.token)
        lobby.timeout = .seconds(5)
        do {
            return try await lobby.placeLocation(location.id, site: placement.site, x: placement.x, y: placement.y)
        } catch let error as LobbyClientError {
            throw AgentError("The lobby refused to place \(location.name) on \(placement.site): \(error.message)", code: error.code.rawValue)
        } catch {
            throw AgentError("Cannot reach the lobby at \(location.lobby) to place \(location.name) (\(error)).", code: "lobbyUnreachable")
        }
    }

    private static func remember(_ location: MarkedLocation, in directory: String, file: String) throws(AgentError) {
        try makePrivateDirectory(directory)
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(location).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw AgentError("Cannot write \(file): \(error.localizedDescription).", code: "stateUnavailable")
        }
    }

    /// What the device broadcasts: the location's iBeacon frame.
    public var payload: AdvertisingPayload? {
        guard case let .iBeacon(uuid, major, minor) = location.beacon else { return nil }
        let frame = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: measuredPower)
        return AdvertisingPayload(manufacturerData: [CompanyIdentifier.apple.rawValue: frame.manufacturerData])
    }

    /// Advertises until SIGTERM/SIGINT (or cancellation), then withdraws the advertisement and
    /// returns; an advertiser failure that waiting cannot fix is thrown.
    public func run(shutdownSignals: [UnixSignal] = [.sigterm, .sigint]) async throws {
        guard let payload else {
            throw AgentError("Location \(location.name) has a beacon identity that is not an iBeacon: \(location.beacon).", code: "badResponse")
        }
        let service: AdvertisingService
        if let key = location.beaconKey {
            let beacon = key.beacon(.location, measuredPower: measuredPower)
            logger.notice("location \(location.name) (\(location.id)) advertising a rotating identity under \(beacon.uuid), a new one every \(key.period)")
            service = AdvertisingService(advertiser: advertiser, payload: payload, rotating: beacon)
        } else {
            logger.notice("location \(location.name) (\(location.id)) advertising \(location.beacon)")
            service = AdvertisingService(advertiser: advertiser, payload: payload)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let session {
            let (location, interval, logger) = (location, onAirInterval, logger)
            services.append(.init(service: TaskService { await Self.tellOnAir(location, session: session, every: interval, logger: logger) },
                                  successTerminationBehavior: .ignore))
            if let scanner {
                let (every, placement) = (hearingInterval, placement)
                logger.notice("location \(location.name): listening for the other beacons on its site, reporting every \(every)")
                services.append(.init(service: TaskService {
                    do {
                        try await Self.reportHearings(location, session: session, scanner: scanner, placement: placement, every: every, logger: logger)
                    } catch is CancellationError {
                    } catch {
                        logger.error("location \(location.name): scanning stopped (\(error)); it keeps advertising, but the site calibrates without what it hears.")
                    }
                }, successTerminationBehavior: .ignore))
            }
        }
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.gracefulShutdownSignals = shutdownSignals
        try await ServiceGroup(configuration: configuration).run()
        logger.notice("location \(location.name): advertisement withdrawn")
    }
}

extension LocationBeaconDevice {
    /// Tells the lobby the location is on the air now and every `interval` until cancelled. A
    /// lobby that is away is told again at the next turn; one that no longer knows the session or
    /// the location is logged, since then no player's sighting proves presence here.
    static func tellOnAir(_ location: MarkedLocation, session: Credentials, every interval: Duration, logger: Logger) async {
        var lobby = LobbyClient(baseURL: location.lobby).authenticated(session.token)
        lobby.timeout = .seconds(5)
        var failing = false
        while !Task.isCancelled {
            do {
                try await lobby.markOnAir(location: location.id)
                if failing { logger.notice("location \(location.name): the lobby knows it is on the air again") }
                failing = false
            } catch let error as LobbyClientError where error.status == 401 || error.status == 404 {
                logger.error("location \(location.name): the lobby refuses to hear that it is on the air (\(error.message)); players near it cannot join its tournaments: run `nearplay login` as its owner and restart the beacon.")
                failing = true
            } catch {
                if !failing { logger.notice("location \(location.name): cannot tell the lobby it is on the air (\(error)); trying again in \(interval)") }
                failing = true
            }
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}

/// Advertises one payload, or a rotating beacon's, until graceful shutdown cancels it.
struct AdvertisingService: Service {
    let advertiser: any Advertiser
    let payload: AdvertisingPayload
    var rotating: RotatingBeacon? = nil

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                if let rotating {
                    try await advertiser.advertise(rotating: rotating.payloads())
                } else {
                    try await advertiser.advertise(payload)
                }
            }
        } catch is CancellationError {}
    }
}
