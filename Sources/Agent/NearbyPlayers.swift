import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Ranging
import Synchronization

/// A recognised player in range, as `nearplay nearby` shows them.
public struct NearbyPlayer: Codable, Sendable, Equatable {
    /// Written `player`, the key the agent's events use for a player too.
    public var username: String
    public var name: String
    public var beacon: String
    public var distance: Double?
    /// The interval meant to hold the true distance about 68 % of the time (metres).
    public var distanceLow: Double?
    public var distanceHigh: Double?
    /// `two-way` when the player's own reading of us was combined with ours, else `one-way`.
    public var ranging: String?
    public var zone: String
    public var lastSeen: Date
    /// Filled in by the local API from the lobby's list of unlocked players.
    public var unlocked: Bool?

    enum CodingKeys: String, CodingKey {
        case username = "player", name, beacon, distance = "distance_m", distanceLow = "distance_lo_m", distanceHigh = "distance_hi_m", ranging
        case zone, lastSeen = "last_seen", unlocked
    }
}

/// Turns the proximity pipeline's events into "player nearby / moved / gone": resolves each
/// beacon identity once (through ``IdentityResolver``), hides identities that belong to nobody
/// this player may see, and remembers who is in range for `nearby` and the encounter reports.
///
/// Lookups, their retries and first reports run as children of ``run()``, which the agent runs
/// as one of its services: nothing is resolved while it does not run.
public actor NearbyPlayers {
    private struct Entry {
        var identity: BeaconFrames.BeaconIdentity
        var distance: Double?
        var interval: ClosedRange<Double>?
        var ranging = PeerReadings.Method.oneWay
        /// Our latest reading of this beacon, for two-way ranging and the encounter reports.
        var reading: TwoWayRanging.Direction?
        var zone: Zone
        var lastSeen: Date
        var player: ResolvedPlayer?
        var resolving = false
        var announced = false
        var announcedDistance: Double?
        var announcedZone: Zone = .unknown
        var announcedRanging = PeerReadings.Method.oneWay
    }

    private let resolver: IdentityResolver
    private let events: AgentEventBus
    private let logger: Logger
    private let clock: AgentClock
    /// Lookups, retries and first reports, run by ``run()``.
    private let children = ChildTasks()
    private var entries: [BeaconFrames.BeaconIdentity: Entry] = [:]
    /// This device's identities (its rotating one's current and neighbouring periods).
    private var ownIdentities: Set<BeaconFrames.BeaconIdentity> = []
    /// Called with each player the first time they are recognised in this run, so the lobby
    /// hears of the encounter at once (invitations need a recent one).
    private let onFirstRecognised: @Sendable ([EncounterSighting]) async -> Void
    private var reported: Set<String> = []
    private var peers: PeerReadings
    /// Identities in range that resolved to nobody, readable without a hop onto the actor, so
    /// their range events (most of a busy room's) can be dropped before it: see ``relevant(_:)``.
    private nonisolated let hidden = Mutex<Set<BeaconFrames.BeaconIdentity>>([])

    /// `peerReadingMaxAge`: seconds a peer's reading of us stays usable for two-way ranging.
    public init(resolver: IdentityResolver, events: AgentEventBus, logger: Logger = Logger(label: "nearplay.nearby"),
                peerReadingMaxAge: Double = 60, clock: AgentClock = .system,
                onFirstRecognised: @escaping @Sendable ([EncounterSighting]) async -> Void = { _ in }) {
        peers = PeerReadings(maximumAge: peerReadingMaxAge)
        self.clock = clock
        self.resolver = resolver
        self.events = events
        self.logger = logger
        self.onFirstRecognised = onFirstRecognised
    }

    /// Resolves identities (and retries, and sends first reports) until cancelled; cancelling it
    /// cancels what is under way.
    public func run() async {
        await children.run()
    }

    /// This device's own identity, never shown as a nearby player.
    public func setOwnIdentity(_ identity: BeaconFrames.BeaconIdentity?) { ownIdentities = identity.map { [$0] } ?? [] }

    /// This device's own identities (a rotating one's around now), never shown as nearby players.
    public func setOwnIdentities(_ identities: Set<BeaconFrames.BeaconIdentity>) { ownIdentities = identities }

    /// The distance model and uncertainty two-way estimates use: the pipeline's own.
    public func setRanging(_ configuration: RangingConfiguration) {
        peers.model = configuration.distanceModel
        peers.uncertainty = configuration.uncertainty
    }

    /// This device's radio offsets as the lobby last published them (nil: none yet): from the next
    /// range event on, every player's distance is corrected with them.
    public func setOwnRadioOffsets(_ offsets: RadioOffsets?) {
        peers.own = offsets.flatMap { $0.isUsable ? $0 : nil }
    }

    /// What `username` read of us (a lobby `peerReading` event at `time`): from the next range
    /// event on, their distance is two-way while the reading is recent.
    public func receivePeerReading(from username: String, rssi: Double, measuredPower: Double, variance: Double?, at time: Date) {
        guard rssi.isFinite, measuredPower.isFinite else { return }
        peers.receive(from: username, TwoWayRanging.Direction(filteredRSSI: rssi, measuredPower: measuredPower,
                                                               filterVariance: variance.map { $0.isFinite ? max(0, $0) : 0 } ?? 0), at: time)
    }

    /// The events ``handle(_:)`` would act on: range events of identities that resolved to nobody
    /// change nothing anyone sees, and cost an actor hop each (200 beacons at 10 Hz with a range
    /// event a second are 200 hops a second).
    public nonisolated func relevant(_ proximityEvents: [ProximityEvent]) -> [ProximityEvent] {
        hidden.withLock { hidden in
            hidden.isEmpty ? proximityEvents : proximityEvents.filter { $0.kind != .range || !hidden.contains($0.identity) }
        }
    }

    /// Takes the pipeline's events, in order. `distanceModel` is the model the pipeline ranged
    /// them with, when it can change while the agent runs (a calibrated site's exponent): two-way
    /// estimates then use the same one as the events' own distances.
    public func handle(_ proximityEvents: [ProximityEvent], distanceModel: DistanceModel? = nil) {
        let now = clock.now
        if let distanceModel { peers.model = distanceModel }
        for event in proximityEvents where !ownIdentities.contains(event.identity) {
            switch event.kind {
            case .enter:
                if entries[event.identity] == nil {
                    entries[event.identity] = Entry(identity: event.identity, zone: .unknown, lastSeen: now)
                }
                startResolving(event.identity)
            case .range:
                guard var entry = entries[event.identity] else { continue }
                entry.lastSeen = now
                if let filtered = event.filteredRSSI, let power = event.measuredPower {
                    entry.reading = TwoWayRanging.Direction(filteredRSSI: filtered, measuredPower: Double(power),
                                                            filterVariance: event.filterVariance ?? 0)
                }
                if event.distance != nil {
                    let estimate = peers.estimate(for: entry.player?.username, forward: entry.reading, oneWay: event.distance,
                                                  interval: event.distanceInterval, now: now)
                    entry.distance = estimate.distance
                    entry.interval = estimate.interval
                    entry.ranging = estimate.method
                }
                if let zone = event.zone { entry.zone = zone }
                entries[event.identity] = entry
                announceMoveIfNoticeable(event.identity)
            case .exit:
                guard let entry = entries.removeValue(forKey: event.identity) else { continue }
                if entry.player == nil { _ = hidden.withLock { $0.remove(event.identity) } }
                // A player whose identity rolled over is still here under the new one.
                if entry.announced, let player = entry.player, !isAnnounced(player.username) {
                    events.publish(.playerGone(player: player.username, name: player.displayName, beacon: entry.identity))
                }
            }
        }
    }

    /// Whether `username` is shown under some identity in range.
    private func isAnnounced(_ username: String) -> Bool {
        entries.values.contains { $0.announced && $0.player?.username == username }
    }

    /// Each recognised player's newest entry: a player whose identity rolled over is heard under
    /// both until the old one times out, and is one player all the same.
    private func newestEntries() -> [Entry] {
        var newest: [String: Entry] = [:]
        for entry in entries.values {
            guard entry.announced, let username = entry.player?.username else { continue }
            if let other = newest[username], other.lastSeen >= entry.lastSeen { continue }
            newest[username] = entry
        }
        return Array(newest.values)
    }

    /// Recognised players in range, nearest first.
    public func players() -> [NearbyPlayer] {
        newestEntries().compactMap { entry -> NearbyPlayer? in
            guard let player = entry.player else { return nil }
            return NearbyPlayer(username: player.username, name: player.displayName, beacon: entry.identity.description,
                                distance: entry.distance, distanceLow: entry.interval?.lowerBound, distanceHigh: entry.interval?.upperBound,
                                ranging: entry.distance == nil ? nil : entry.ranging.rawValue,
                                zone: entry.zone.rawValue, lastSeen: entry.lastSeen)
        }.sorted { ($0.distance ?? .infinity, $0.username) < ($1.distance ?? .infinity, $1.username) }
    }

    /// The lobby's form of the players in range, for an encounter report.
    public func encounterSightings() -> [EncounterSighting] {
        newestEntries().compactMap { Self.sighting($0) }
    }

    /// Stops showing `username` (after a block) until the lobby says otherwise.
    public func forget(username: String) {
        peers.forget(username)
        for (identity, entry) in entries where entry.player?.username == username {
            entries[identity] = nil
            events.publish(.playerGone(player: username, name: entry.player?.displayName, beacon: identity))
        }
    }

    private static func sighting(_ entry: Entry) -> EncounterSighting? {
        var sighting = EncounterSighting(entry.identity, distance: entry.distance, at: entry.lastSeen)
        // Only a reading the lobby accepts: one out of its range would get the whole report refused.
        if let reading = entry.reading, (-130...20).contains(reading.filteredRSSI), (-128...127).contains(reading.measuredPower),
           reading.filterVariance.isFinite, reading.filterVariance >= 0 {
            sighting?.rssi = reading.filteredRSSI
            sighting?.measuredPower = reading.measuredPower
            sighting?.rssiVariance = reading.filterVariance
        }
        return sighting
    }

    private func startResolving(_ identity: BeaconFrames.BeaconIdentity) {
        guard var entry = entries[identity], entry.player == nil, !entry.resolving else { return }
        entry.resolving = true
        entries[identity] = entry
        let resolver = resolver
        children.spawn { [self] in
            let answer = await resolver.resolve(identity)
            await self.resolved(identity, answer)
        }
    }

    private func resolved(_ identity: BeaconFrames.BeaconIdentity, _ answer: IdentityResolver.Answer) {
        // Already recognised: a second answer (a resolution begun before an exit and finished
        // after the re-entry's own) must not announce the player again.
        guard var entry = entries[identity], entry.player == nil else { return }
        entry.resolving = false
        guard case .player(let player) = answer else {
            // Nobody (stays hidden until it exits and comes back) or lobby away (asked again at the next enter).
            entries[identity] = entry
            if answer == .unavailable { retryLater(identity) } else { _ = hidden.withLock { $0.insert(identity) } }
            return
        }
        // The same player under a new identity (theirs rotated): one player, no new arrival.
        let known = isAnnounced(player.username)
        // Each resolution brings the offsets the lobby holds now (a rotated identity, fresher ones).
        peers.setOffsets(player.radioOffsets, for: player.username)
        entry.player = player
        entry.announced = true
        entry.announcedDistance = entry.distance
        entry.announcedZone = entry.zone
        entry.announcedRanging = entry.ranging
        entries[identity] = entry
        if known { return }
        events.publish(.playerNearby(Self.inRange(player, entry)))
        if reported.insert(player.username).inserted, let sighting = Self.sighting(entry) {
            let report = onFirstRecognised
            children.spawn { await report([sighting]) }
        }
    }

    private func retryLater(_ identity: BeaconFrames.BeaconIdentity) {
        children.spawn { [self, clock] in
            do { try await clock.sleep(for: .seconds(3)) } catch { return }
            await self.startResolving(identity)
        }
    }

    /// A zone change, a switch between one-way and two-way ranging, or a move of a quarter of the distance (at least half a metre).
    private func announceMoveIfNoticeable(_ identity: BeaconFrames.BeaconIdentity) {
        guard var entry = entries[identity], entry.announced, let player = entry.player else { return }
        let changed = entry.zone != entry.announcedZone || entry.ranging != entry.announcedRanging
        var moved = false
        if let now = entry.distance, let then = entry.announcedDistance {
            moved = abs(now - then) >= max(0.5, 0.25 * then)
        } else if entry.distance != nil {
            moved = true
        }
        guard changed || moved else { return }
        entry.announcedDistance = entry.distance
        entry.announcedZone = entry.zone
        entry.announcedRanging = entry.ranging
        entries[identity] = entry
        events.publish(.playerMoved(Self.inRange(player, entry)))
    }

    /// The player as the player events describe them.
    private static func inRange(_ player: ResolvedPlayer, _ entry: Entry) -> AgentEvent.PlayerInRange {
        AgentEvent.PlayerInRange(player: player.username, name: player.displayName, beacon: entry.identity, distance: entry.distance,
                                 interval: entry.interval, ranging: entry.distance == nil ? nil : entry.ranging, zone: entry.zone)
    }
}
