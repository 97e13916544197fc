import BeaconFrames
import BeaconKeys
import Foundation
import GRDB
import LobbyDatabase

/// Why a location's sighting proved no presence (`nearplay_lobby_presence_refused_total`).
public enum PresenceRefusal: String, CaseIterable, Codable, Sendable {
    /// The identity belongs to a period that ended longer ago than
    /// ``LobbyConfiguration/presenceReportWindow``: recorded earlier and played back, or held
    /// too long before it was sent.
    case expiredIdentity
    /// The sighting says it was heard longer ago than the window.
    case lateReport
}

/// What a location identity heard at some time names.
enum LocationMatch {
    case location(Int64)
    case refused(PresenceRefusal)
    case unknown
}

extension LobbyStore {
    /// The player's rotating-identity key. A player registered before identities rotated gets
    /// its secret here, the first time its agent asks.
    public func beaconKey(_ playerId: Int64) async throws -> BeaconKey {
        let secret: BeaconSecret = try await write { context in
            // The player first: two first asks at once must not each store a secret of their own
            // (the later one would overwrite the key the earlier one answered).
            try context.db.lock("player", ids: [playerId])
            let record = try self.livePlayer(context.db, id: playerId)
            if let data = record.beaconSecret, let secret = BeaconSecret(bytes: Array(data)) { return secret }
            let secret = BeaconSecret.random()
            try context.db.execute("UPDATE player SET beaconSecret = ? WHERE id = ?", Data(secret.bytes), playerId)
            try context.db.notify(WriteContext.identityChannel, "player:\(playerId)")
            return secret
        }
        identities.add(.player, playerId, secret: secret)
        return key(secret)
    }

    /// A location's rotating-identity key, for its owner (its beacon device) only; to others the
    /// location is not found. A location registered before identities rotated gets its secret
    /// here, the first time its beacon asks.
    public func locationBeaconKey(_ playerId: Int64, location id: Int64) async throws -> BeaconKey {
        let secret: BeaconSecret = try await write { context in
            // The location first: two first asks at once must not each store a secret of their own
            // (the later one would overwrite the key the earlier one answered).
            try context.db.lock("location", ids: [id])
            guard let row = try context.db.fetchOne("SELECT ownerId, beaconSecret FROM location WHERE id = ?", id),
                  try row.get(0, as: Int64.self) == playerId
            else { throw LobbyError.locationNotFound(id) }
            if let data = try row.get(1, as: Data?.self), let secret = BeaconSecret(bytes: Array(data)) { return secret }
            let secret = BeaconSecret.random()
            try context.db.execute("UPDATE location SET beaconSecret = ? WHERE id = ?", Data(secret.bytes), id)
            try context.db.notify(WriteContext.identityChannel, "location:\(id)")
            return secret
        }
        identities.add(.location, id, secret: secret)
        return key(secret)
    }

    func key(_ secret: BeaconSecret) -> BeaconKey {
        BeaconKey(secret: secret, periodSeconds: configuration.rotationPeriod.seconds, uuid: configuration.deploymentUUID,
                  locationUUID: locationUUID, serverTime: clock.now())
    }

    /// The proximity UUID this deployment's locations advertise under.
    public var locationUUID: UUID { RotatingIdentity.locationUUID(deployment: configuration.deploymentUUID) }

    /// Whether the static identities of before rotation still resolve at `now`.
    func staticIdentitiesResolve(at now: Date) -> Bool {
        staticIdentitiesUntil.map { now < $0 } ?? false
    }

    /// The identity a player advertises now: its rotating one, or (no secret yet) its static one.
    func currentBeacon(_ record: PlayerRecord, at now: Date) -> BeaconIdentity {
        if let data = record.beaconSecret, let secret = BeaconSecret(bytes: Array(data)) {
            let (major, minor) = RotatingIdentity.player(secret, period: configuration.rotationPeriod.index(at: now))
            return BeaconIdentity(uuid: configuration.deploymentUUID, major: UInt16(major), minor: UInt16(minor))
        }
        return BeaconIdentity(uuid: configuration.deploymentUUID, major: UInt16(record.beaconMajor), minor: UInt16(record.beaconMinor))
    }

    /// The undeleted players that advertised `major`/`minor` (under the deployment UUID) around
    /// `at`: in `at`'s period or a neighbouring one (clocks a period apart still agree), and,
    /// while static identities resolve, the one whose static identity it is. Usually one; two
    /// when two players' values collide in a period.
    func players(_ db: any SQLSession, major: Int, minor: Int, heardAt at: Date, now: Date) throws -> [(id: Int64, activeAt: Date?)] {
        let index = configuration.rotationPeriod.index(at: at)
        var ids = Set(identities.owners(.player, major: major, minor: minor, in: (index - 1)...(index + 1), now: now).map(\.id))
        if staticIdentitiesResolve(at: now), let id = try db.fetchValue(Int64.self, """
            SELECT id FROM player WHERE beaconMajor = ? AND beaconMinor = ? AND deletedAt IS NULL
            """, major, minor) {
            ids.insert(id)
        }
        return try ids.sorted().compactMap { id in
            try db.fetchOne("SELECT activeAt FROM player WHERE id = ? AND deletedAt IS NULL", id)
                .map { (id, try $0.date(atIndex: 0)) }
        }
    }

    /// The location a sighting names, if it proves presence now: a rotating identity of the
    /// period that is running (or one that ended or starts within
    /// ``LobbyConfiguration/presenceReportWindow``), heard within that window; or, while they
    /// resolve, a static one. An identity of an earlier period is refused, and so is a sighting
    /// heard too long ago: a recording advertised again later proves nothing.
    func location(_ report: EncounterReport, now: Date) -> LocationMatch {
        let window = configuration.presenceReportWindow
        guard let (uuid, major, minor) = report.beacon.iBeaconFields else { return .unknown }
        if uuid == configuration.deploymentUUID, major == LocationBeacon.major {
            return staticIdentitiesResolve(at: now) ? .location(Int64(minor)) : .unknown
        }
        guard uuid == locationUUID else { return .unknown }
        let period = configuration.rotationPeriod
        let current = period.index(at: now)
        let found = identities.owners(.location, major: major, minor: minor, in: (current - 2)...(current + 1), now: now)
        guard !found.isEmpty else { return .unknown }
        let live = found.filter { match in
            now >= period.start(of: match.period).addingTimeInterval(-window)
                && now < period.end(of: match.period).addingTimeInterval(window)
        }
        guard let match = live.first, live.count == 1 else {
            return live.isEmpty ? .refused(.expiredIdentity) : .unknown
        }
        guard now.timeIntervalSince(report.at) <= window else { return .refused(.lateReport) }
        return .location(match.id)
    }

    /// The location a player's agent heard advertising `beacon` now, for
    /// `GET /v1/locations/resolve`: a rotating identity of the running period (or one within
    /// the presence window of it), or a static one while they resolve. Each identity that leads
    /// to no location spends one of the viewer's guesses, as resolving players' does.
    public func resolveLocation(viewer: Int64, beacon: BeaconIdentity) async throws -> Location {
        let now = clock.now()
        if let wait = fairPlay.admitResolution(viewer, at: now) {
            throw LobbyError.throttled(.tooManyResolutions,
                "You looked up \(configuration.resolutionsPerMinute) beacon identities in the last minute, the most allowed: wait \(Int(wait.rounded(.up))) s.",
                retryAfter: wait)
        }
        guard fairPlay.hasGuesses(viewer, at: now) else { throw guessesSpent(viewer, at: now) }
        if case .location(let id) = location(EncounterReport(beacon, distance: nil, at: now), now: now),
           let found = try? await read({ db, now in try self.locationView(db, id: id, now: now, viewer: viewer) }) {
            return found
        }
        _ = fairPlay.spendGuess(viewer, at: now)
        throw LobbyError(.notFound, .beaconNotFound, "No location advertises \(beacon) now.")
    }
}

extension LobbyStore {
    /// The identity location `id` advertises at `now`: its rotating one, or (no secret yet) its
    /// static one; nil for an unknown location.
    func currentLocationBeacon(_ id: Int64, at now: Date) async throws -> BeaconIdentity? {
        let data: Data?? = try await read { db, _ in
            try db.fetchOne("SELECT beaconSecret FROM location WHERE id = ?", id).map { try $0.get(0, as: Data?.self) }
        }
        guard let data else { return nil }
        if let data, let secret = BeaconSecret(bytes: Array(data)) {
            let (major, minor) = RotatingIdentity.location(secret, period: configuration.rotationPeriod.index(at: now))
            return BeaconIdentity(uuid: locationUUID, major: UInt16(major), minor: UInt16(minor))
        }
        return LocationBeacon.staticIdentity(id, deployment: configuration.deploymentUUID)
    }
}
