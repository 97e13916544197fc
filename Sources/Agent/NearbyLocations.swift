import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Ranging

/// A multiplayer location in range, as `nearplay nearby` and `nearplay tournaments` show it.
public struct NearbyLocation: Codable, Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var beacon: String
    public var distance: Double?
    public var zone: String
    public var lastSeen: Date
    /// Its running tournaments, as the lobby last listed them.
    public var tournaments: [TournamentSummary]

    enum CodingKeys: String, CodingKey {
        case id, name, beacon, distance = "distance_m", zone, lastSeen = "last_seen", tournaments
    }
}

/// Turns the proximity pipeline's events about location beacons (the deployment's UUID with
/// major ``LocationBeacon/major``) into `location` / `location_gone` events: looks each location
/// up at the lobby when it comes into range, keeps its distance, and hands its sighting to the
/// encounter reports, which are the proof of presence the lobby asks for before a player joins
/// one of its tournaments.
///
/// Lookups, their retries and first reports run as children of ``run()``, which the agent runs
/// as one of its services: no location is looked up while it does not run.
public actor NearbyLocations {
    private struct Entry {
        var identity: BeaconFrames.BeaconIdentity
        /// Known at once for a static identity; for a rotating one, once the lobby answered.
        var id: Int64?
        var distance: Double?
        var zone: Zone = .unknown
        var lastSeen: Date
        var location: LobbyLocation?
        var looking = false
        /// When the lobby last answered about this location.
        var fetchedAt: Date?
        /// Path loss of the last range event (measured power − filtered RSSI, dB): how near the
        /// location is, whatever distance model is in use.
        var loss: Double?
    }

    private let lobby: LobbyClient
    private let events: AgentEventBus
    private let deployment: UUID?
    /// The proximity UUID this deployment's locations rotate their identities under.
    private let locationUUID: BeaconUUID?
    private let logger: Logger
    private let clock: AgentClock
    /// Lookups, retries and first reports, run by ``run()``.
    private let children = ChildTasks()
    private let onFirstSeen: @Sendable ([EncounterSighting]) async -> Void
    private let onSite: @Sendable (RangingSite?) -> Void
    /// The site last handed to `onSite`.
    private var site: RangingSite?
    private var entries: [BeaconFrames.BeaconIdentity: Entry] = [:]
    /// Seconds before a location whose lookup failed is asked about again.
    private let retryAfterFailure: Duration = .seconds(3)
    /// Seconds after which a location in range is looked up again, so a site profile published
    /// (or fitted again) while the agent is there, and new tournaments, reach it.
    private let refreshInterval: TimeInterval

    /// - Parameters:
    ///   - deployment: the proximity UUID of this deployment (our own beacon's); nil recognises nothing.
    ///   - onFirstSeen: called with a location's sighting as soon as it is recognised, so the lobby
    ///     hears of the visit at once.
    ///   - onSite: called when the site to range with changes: the nearest recognised location
    ///     in range that published a site profile, or nil when none is.
    ///   - refreshInterval: seconds after which a location in range is looked up again.
    ///   - locationUUID: the proximity UUID locations rotate their identities under (the lobby's
    ///     beacon key names it); nil recognises only static location identities.
    public init(lobby: LobbyClient, events: AgentEventBus, deployment: UUID?, locationUUID: UUID? = nil,
                logger: Logger = Logger(label: "nearplay.locations"),
                refreshInterval: TimeInterval = 60, clock: AgentClock = .system,
                onFirstSeen: @escaping @Sendable ([EncounterSighting]) async -> Void = { _ in },
                onSite: @escaping @Sendable (RangingSite?) -> Void = { _ in }) {
        self.refreshInterval = refreshInterval
        self.clock = clock
        self.lobby = lobby
        self.events = events
        self.deployment = deployment
        self.locationUUID = locationUUID.flatMap { BeaconUUID($0.uuidString) }
        self.logger = logger
        self.onFirstSeen = onFirstSeen
        self.onSite = onSite
    }

    /// Looks locations up (and retries, and sends first reports) until cancelled; cancelling it
    /// cancels what is under way.
    public func run() async {
        await children.run()
    }

    /// The location id a static location identity names (the deployment UUID, major 0, the id
    /// as minor: what locations advertised before their identities rotated), or nil.
    public nonisolated func locationId(_ identity: BeaconFrames.BeaconIdentity) -> Int64? {
        guard let deployment, let beacon = PlayerBeacon(identity) else { return nil }
        return LocationBeacon.locationId(of: beacon, deployment: deployment)
    }

    /// Whether `identity` is a location's: a rotating one under the locations' UUID, or a static one.
    public nonisolated func isLocation(_ identity: BeaconFrames.BeaconIdentity) -> Bool {
        if let locationUUID, case .iBeacon(let uuid, _, _) = identity, uuid == locationUUID { return true }
        return locationId(identity) != nil
    }

    /// Whether another entry already shows location `id`.
    private func isShown(_ id: Int64, besides identity: BeaconFrames.BeaconIdentity) -> Bool {
        entries.contains { $0.key != identity && $0.value.id == id && $0.value.location != nil }
    }

    /// Takes the pipeline's events about location beacons, in order.
    public func handle(_ proximityEvents: [ProximityEvent]) {
        let now = clock.now
        for event in proximityEvents {
            guard isLocation(event.identity) else { continue }
            switch event.kind {
            case .enter:
                if entries[event.identity] == nil {
                    entries[event.identity] = Entry(identity: event.identity, id: locationId(event.identity), lastSeen: now)
                }
                lookUp(event.identity)
            case .range:
                guard var entry = entries[event.identity] else { continue }
                entry.lastSeen = now
                if let distance = event.distance { entry.distance = distance }
                if let zone = event.zone { entry.zone = zone }
                if let filtered = event.filteredRSSI, let power = event.measuredPower { entry.loss = Double(power) - filtered }
                entries[event.identity] = entry
                if entry.location != nil, !entry.looking, now.timeIntervalSince(entry.fetchedAt ?? now) >= refreshInterval {
                    refresh(event.identity)
                }
            case .exit:
                guard let entry = entries.removeValue(forKey: event.identity), let location = entry.location, let id = entry.id,
                      // A location whose identity rotated is still here under the new one.
                      !isShown(id, besides: event.identity)
                else { continue }
                events.publish(.locationGone(location: id, name: location.name, beacon: entry.identity))
            }
        }
        followSite()
    }

    /// The site ranging should follow now: the nearest recognised location with a usable site
    /// profile. Nearest by path loss, not by distance: distances depend on the model, which is
    /// the very thing the choice sets, and two sites compared through different exponents could
    /// take turns at being nearest.
    public func rangingSite() -> RangingSite? {
        entries.values.compactMap { entry -> (loss: Double, site: RangingSite)? in
            guard let location = entry.location, let id = entry.id, let exponent = Self.siteExponent(location) else { return nil }
            return (entry.loss ?? .infinity, RangingSite(location: id, name: location.name, exponent: exponent))
        }.min { ($0.loss, $0.site.location) < ($1.loss, $1.site.location) }?.site
    }

    /// The exponent to range with at `location`: the one its operator measured, else the one the
    /// lobby solved from the crowd there when the readings pinned it better than the default's
    /// ±0.5 does (``crowdExponentError``).
    static func siteExponent(_ location: LobbyLocation) -> Double? {
        if let profile = location.siteProfile, RangingSite.plausibleExponents.contains(profile.exponent) { return profile.exponent }
        if let crowd = location.crowdProfile, RangingSite.plausibleExponents.contains(crowd.exponent),
           crowd.exponentError.isFinite, crowd.exponentError <= crowdExponentError { return crowd.exponent }
        return nil
    }

    /// The largest standard error of a crowd-solved exponent the agent ranges with.
    static let crowdExponentError = 0.3

    /// Tells `onSite` when the site to range with changed.
    private func followSite() {
        let current = rangingSite()
        guard current != site else { return }
        site = current
        onSite(current)
    }

    /// Recognised locations in range, nearest first.
    public func locations() -> [NearbyLocation] {
        newestEntries().compactMap { entry -> NearbyLocation? in
            guard let location = entry.location, let id = entry.id else { return nil }
            return NearbyLocation(id: id, name: location.name, beacon: entry.identity.description, distance: entry.distance,
                                  zone: entry.zone.rawValue, lastSeen: entry.lastSeen, tournaments: location.tournaments)
        }.sorted { ($0.distance ?? .infinity, $0.id) < ($1.distance ?? .infinity, $1.id) }
    }

    /// Replaces a location's running tournaments with a fresher list from the lobby.
    public func update(_ location: LobbyLocation) {
        for (identity, entry) in entries where entry.id == location.id { entries[identity]?.location = location }
        followSite()
    }

    /// The lobby's form of the locations in range, for an encounter report.
    /// Only the identity each location advertises now (heard last), and only while it is heard:
    /// the lobby refuses an identity of a period that is over, or one heard too long ago.
    public func encounterSightings() -> [EncounterSighting] {
        let recent = clock.now.addingTimeInterval(-Self.reportableAge)
        return newestEntries().compactMap { entry in
            entry.lastSeen < recent ? nil : EncounterSighting(entry.identity, distance: entry.distance, at: entry.lastSeen)
        }
    }

    /// How long after last hearing a location the agent still reports it: inside the lobby's
    /// presence window (30 s by default).
    static let reportableAge: TimeInterval = 20

    /// Each recognised location's entry heard last (a location whose identity rotated is heard
    /// under both until the old one times out).
    private func newestEntries() -> [Entry] {
        var newest: [Int64: Entry] = [:]
        for entry in entries.values {
            guard entry.location != nil, let id = entry.id else { continue }
            if let other = newest[id], other.lastSeen >= entry.lastSeen { continue }
            newest[id] = entry
        }
        return Array(newest.values)
    }

    private func lookUp(_ identity: BeaconFrames.BeaconIdentity) {
        guard var entry = entries[identity], entry.location == nil, !entry.looking else { return }
        entry.looking = true
        entries[identity] = entry
        let (lobby, id, logger, retry, clock) = (lobby, entry.id, logger, retryAfterFailure, clock)
        children.spawn { [self] in
            do {
                if let id {
                    await self.found(identity, try await lobby.location(id))
                } else if case .iBeacon = identity {
                    await self.found(identity, try await lobby.resolveLocation(identity))
                }
            } catch let error as LobbyClientError where error.status == 404 {
                logger.info("the beacon \(identity) names no location the lobby knows now")
                await self.lookedUp(identity)
            } catch {
                logger.info("could not look up the location advertising \(identity): \(error)")
                await self.lookedUp(identity)
                do { try await clock.sleep(for: retry) } catch { return }
                await self.lookUp(identity)
            }
        }
    }

    private func lookedUp(_ identity: BeaconFrames.BeaconIdentity) { entries[identity]?.looking = false }

    /// Asks the lobby about a recognised location again; a failure waits for the next interval.
    private func refresh(_ identity: BeaconFrames.BeaconIdentity) {
        guard let id = entries[identity]?.id ?? nil else { return }
        entries[identity]?.looking = true
        let (lobby, logger) = (lobby, logger)
        children.spawn { [self] in
            do {
                await self.refreshed(identity, try await lobby.location(id))
            } catch {
                logger.debug("could not look up location \(id) again: \(error)")
                await self.refreshed(identity, nil)
            }
        }
    }

    private func refreshed(_ identity: BeaconFrames.BeaconIdentity, _ location: LobbyLocation?) {
        guard var entry = entries[identity] else { return }
        entry.looking = false
        entry.fetchedAt = clock.now
        if let location { entry.location = location }
        entries[identity] = entry
        followSite()
    }

    private func found(_ identity: BeaconFrames.BeaconIdentity, _ location: LobbyLocation) {
        guard var entry = entries[identity], entry.location == nil else { return }
        entry.looking = false
        entry.location = location
        entry.id = location.id
        entry.fetchedAt = clock.now
        entries[identity] = entry
        // The same location under its next period's identity: no new arrival.
        if isShown(location.id, besides: identity) {
            followSite()
            return
        }
        let running = location.tournaments.filter { $0.state == .open }
            .map { AgentEvent.RunningTournament(id: $0.id, period: $0.period.rawValue, endsAt: $0.endsAt) }
        events.publish(.location(AgentEvent.LocationInRange(location: location.id, name: location.name, beacon: identity, distance: entry.distance,
                                                            zone: entry.zone, tournaments: running)))
        followSite()
        if let sighting = EncounterSighting(identity, distance: entry.distance, at: entry.lastSeen) {
            let report = onFirstSeen
            children.spawn { await report([sighting]) }
        }
    }
}
