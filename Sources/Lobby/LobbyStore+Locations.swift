import BeaconKeys
import Foundation
import LobbyDatabase

extension LobbyStore {
    /// Registers the location `name` for its owner, or returns the one the owner registered under
    /// that name before (a beacon device restarting re-uses its location). A name another player
    /// registered is refused. Its daily, weekly and monthly tournaments start at once.
    ///
    /// - Parameter timeZone: an IANA time zone name for its tournament windows; UTC when nil. A
    ///   re-used location keeps the zone it has unless another one is given.
    public func registerLocation(_ ownerId: Int64, name: String, timeZone: String? = nil) async throws -> LocationReceipt {
        let name = try Validation.name(name, field: "name")
        if let timeZone, !TimeZoneNames.accepts(timeZone) {
            throw LobbyError.invalid("timeZone", "\"\(timeZone.prefix(64))\" is not an IANA time zone such as Europe/Oslo or UTC.")
        }
        return try await write { context in
            let db = context.db
            // The owner first: its registrations run one at a time, so the ration of new names
            // per day and the re-use of its own names are decided on what the last one committed.
            try db.lock("player", ids: [ownerId])
            _ = try self.livePlayer(db, id: ownerId)
            let taken = LobbyError(.conflict, .locationNameTaken, "Another player registered a location called \(name): choose another name.")
            if let existing = try db.fetchOne("SELECT id, ownerId FROM location WHERE \(db.caseless("name"))", name) {
                guard try existing.get(1, as: Int64.self) == ownerId else { throw taken }
                let id = try existing.get(0, as: Int64.self)
                // Its device registers as it starts to advertise.
                try db.execute("UPDATE location SET onAirAt = ? WHERE id = ?", context.now.unixTime, id)
                if let timeZone {
                    try db.execute("UPDATE location SET timeZone = ? WHERE id = ?", timeZone, id)
                }
                try self.scheduleTournaments(&context, locationId: id)
                return LocationReceipt(location: try self.locationView(db, id: id, now: context.now, viewer: ownerId), created: false)
            }
            // New names are rationed per account, so one account cannot squat them.
            let recent = try db.fetchValue(Int.self, "SELECT COUNT(*) FROM location WHERE ownerId = ? AND createdAt > ?",
                                           ownerId, context.now.addingTimeInterval(-86400).unixTime) ?? 0
            guard recent < self.configuration.locationsPerDay else {
                throw LobbyError(.conflict, .locationLimitReached,
                                 "You registered \(recent) locations in the last 24 hours, the most one account may: register the next one tomorrow.")
            }
            let count = try db.fetchValue(Int.self, "SELECT COUNT(*) FROM location") ?? 0
            guard count < LocationBeacon.maximumLocations else {
                throw LobbyError(.conflict, .locationsExhausted, "This deployment has \(count) locations, as many as beacon identities allow.")
            }
            let secret = BeaconSecret.random()
            // No row back when another player registered the name meanwhile (on PostgreSQL, in a
            // transaction that committed after this one looked): refused as taken, not as an error.
            guard let id = try db.fetchValue(Int64.self, """
                INSERT INTO location (name, ownerId, timeZone, createdAt, onAirAt, beaconSecret) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING RETURNING id
                """, name, ownerId, timeZone ?? "UTC", context.now.unixTime, context.now.unixTime, Data(secret.bytes))
            else { throw taken }
            // In the tables at once; a transaction that then fails leaves an id no sighting names.
            self.identities.add(.location, id, secret: secret)
            try db.notify(WriteContext.identityChannel, "location:\(id)")
            try self.scheduleTournaments(&context, locationId: id)
            return LocationReceipt(location: try self.locationView(db, id: id, now: context.now, viewer: ownerId), created: true)
        }
    }

    /// A location with its running tournaments; `notFound` for an unknown id. Its position
    /// only when `viewer` owns it.
    public func location(_ id: Int64, viewer: Int64? = nil) async throws -> Location {
        try await settleTournamentsIfDue()
        return try await read { db, now in try self.locationView(db, id: id, now: now, viewer: viewer) }
    }

    /// Publishes the site profile of a location the caller owns (its beacon device does, with
    /// the profile calibrated there); another player's location is not found.
    public func publishSiteProfile(_ playerId: Int64, location id: Int64, exponent: Double, distances: [Double], readings: Int) async throws -> Location {
        guard exponent.isFinite, (1...6).contains(exponent) else {
            throw LobbyError.invalid("exponent", "must be a path-loss exponent between 1 and 6, got \(exponent).")
        }
        guard (2...20).contains(distances.count), distances.allSatisfy({ $0.isFinite && $0 > 0 && $0 <= 1000 }),
              Set(distances).count == distances.count
        else {
            throw LobbyError.invalid("distances", "must list 2 to 20 different distances in metres (above 0, at most 1000), each once.")
        }
        guard readings >= 1 else { throw LobbyError.invalid("readings", "must be at least 1.") }
        return try await write { context in
            let db = context.db
            _ = try self.ownedLocation(db, playerId: playerId, id: id)
            let encoded = String(decoding: try JSONEncoder().encode(distances), as: UTF8.self)
            try db.execute("""
                UPDATE location SET siteExponent = ?, siteDistances = ?, siteReadings = ?, siteCalibratedAt = ? WHERE id = ?
                """, exponent, encoded, readings, context.now.unixTime, id)
            return try self.locationView(db, id: id, now: context.now, viewer: playerId)
        }
    }

    /// The location `id` if `playerId` owns it, with its site, spot and when it was placed. To
    /// others it answers as it would if it were not there, so no one learns which ids are
    /// registered by trying what only owners may do.
    func ownedLocation(_ db: any SQLSession, playerId: Int64, id: Int64) throws -> (site: String?, x: Double?, y: Double?, placedAt: Date?) {
        guard let row = try db.fetchOne("SELECT ownerId, positionSite, positionX, positionY, placedAt FROM location WHERE id = ?", id),
              try row.get(0, as: Int64.self) == playerId
        else { throw LobbyError.locationNotFound(id) }
        return (try row.get(1, as: String?.self), try row.get(2, as: Double?.self), try row.get(3, as: Double?.self),
                try row.get(4, as: Double?.self).map(Date.init(timeIntervalSince1970:)))
    }

    /// Records that `reporter` saw the location advertising `report`'s identity (``location(_:now:)``
    /// says which location, if the report proves presence at all). Called for each sighting
    /// of a location in an encounter report.
    func recordLocationSighting(_ context: inout WriteContext, reporter: Int64, _ report: EncounterReport) throws -> LocationMatch {
        let at = min(report.at, context.now)
        let match = location(report, now: context.now)
        guard case .location(let id) = match else { return match }
        // Only a beacon on the air could have been heard: its device told the lobby so within the
        // encounter window before the sighting (``markOnAir(_:location:)``).
        guard try context.db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM location WHERE id = ? AND onAirAt >= ?)",
                                        id, at.addingTimeInterval(-configuration.encounterWindow).unixTime) == true
        else { return .unknown }
        try context.db.execute("""
            INSERT INTO locationSighting (playerId, locationId, lastSeenAt, distance) VALUES (?, ?, ?, ?)
            ON CONFLICT (playerId, locationId) DO UPDATE SET lastSeenAt = excluded.lastSeenAt,
                distance = excluded.distance WHERE excluded.lastSeenAt >= locationSighting.lastSeenAt
            """, reporter, id, at.unixTime, report.distance)
        return match
    }

    /// The location's beacon device says it is advertising now. Only its owner's session can say
    /// so; to others the location answers as it would if it were not there. A device says it
    /// about once a minute while it advertises (``LocationBeaconDevice``); sightings of a location
    /// whose device has not said so within ``LobbyConfiguration/encounterWindow`` prove no presence.
    public func markOnAir(_ playerId: Int64, location id: Int64) async throws {
        try await write { context in
            _ = try self.ownedLocation(context.db, playerId: playerId, id: id)
            try context.db.execute("UPDATE location SET onAirAt = ? WHERE id = ?", context.now.unixTime, id)
        }
    }

    /// Whether `playerId` reported the location's beacon within ``LobbyConfiguration/encounterWindow``
    /// before `now`: the proof of presence joining a tournament there needs.
    func isNear(_ db: any SQLSession, playerId: Int64, locationId: Int64, now: Date) throws -> Bool {
        try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM locationSighting WHERE playerId = ? AND locationId = ? AND lastSeenAt >= ?)
            """, playerId, locationId, now.addingTimeInterval(-configuration.encounterWindow).unixTime) ?? false
    }

    /// The location as `viewer` may see it: where its beacon stands (its owner's site label and
    /// layout) only to its owner; ids are sequential, so anyone else could list every owner's.
    func locationView(_ db: any SQLSession, id: Int64, now: Date, viewer: Int64? = nil) throws -> Location {
        guard let row = try db.fetchOne("""
            SELECT id, name, ownerId, timeZone, createdAt, siteExponent, siteDistances, siteReadings, siteCalibratedAt,
                positionSite, positionX, positionY, placedAt
            FROM location WHERE id = ?
            """, id) else {
            throw LobbyError.locationNotFound(id)
        }
        var siteProfile: SiteProfile?
        if let exponent = try row.get(5, as: Double?.self), let text = try row.get(6, as: String?.self),
           let readings = try row.get(7, as: Int?.self),
           let distances = try? JSONDecoder().decode([Double].self, from: Data(text.utf8)) {
            siteProfile = SiteProfile(exponent: exponent, distances: distances, readings: readings,
                                      calibratedAt: try row.requiredDate(atIndex: 8, "siteCalibratedAt"))
        }
        let owner = try row.get(2, as: Int64.self)
        var position: LocationPosition?
        if viewer == owner, let site = try row.get(9, as: String?.self), let x = try row.get(10, as: Double?.self),
           let y = try row.get(11, as: Double?.self), let placedAt = try row.get(12, as: Double?.self) {
            position = LocationPosition(site: site, x: x, y: y, placedAt: Date(timeIntervalSince1970: placedAt))
        }
        let tournaments = try db.fetchAll("""
            SELECT id FROM tournament WHERE locationId = ? AND state = \(TournamentState.open.sqlLiteral) AND endsAt > ? ORDER BY endsAt, id
            """, id, now.unixTime).map { try $0.get(0, as: Int64.self) }
        return Location(
            id: id, name: try row.get(1, as: String.self), owner: try names(db, [owner])[owner] ?? "",
            beacon: LocationBeacon.staticIdentity(id, deployment: configuration.deploymentUUID),
            timeZone: try row.get(3, as: String.self), createdAt: try row.requiredDate(atIndex: 4, "createdAt"),
            tournaments: try tournaments.map { try tournamentSummary(db, id: $0) }, siteProfile: siteProfile,
            crowdProfile: try crowdProfile(db, locationId: id), position: position)
    }
}

/// A registered location, and whether this request created it.
public struct LocationReceipt: Sendable {
    public var location: Location
    public var created: Bool
}

extension LobbyError {
    static func locationNotFound(_ id: Int64) -> LobbyError {
        LobbyError(.notFound, .locationNotFound, "There is no location \(id).")
    }
}
