import Foundation
import LobbyDatabase
import Ranging

/// Calibration from location beacons: an owner places its beacons on a site (a label of its own
/// and a position in metres on the site's plane), each placed beacon scans and reports the
/// beacons it hears, and the lobby pairs the two directions of each path, at the distance the
/// two positions give, into exchanges. The periodic crowd solve
/// (``solveCrowdCalibration()``) solves each site's exponent and its beacons' offsets from them
/// and publishes the exponent as each of the site's locations' ``CrowdProfile`` (source
/// `beacons`), which agents near the location range with.
///
/// Only one owner's beacons calibrate one site: a stranger cannot place a beacon on it, and its
/// hearings of other owners' locations are ignored, so nobody can pull another owner's exponent
/// by lying about where a beacon stands or what it hears.
extension LobbyStore {
    /// Places the location's beacon on `site` at (`x`, `y`) metres. Only its owner may; to
    /// others the location is not found. Site labels compare without regard to case (as SQLite's
    /// `lower()` folds: ASCII letters). A move (another site or spot) forgets what the beacon
    /// heard and was heard at before, which was heard from elsewhere; a label retyped in another
    /// case is only stored.
    public func placeLocation(_ playerId: Int64, location id: Int64, site: String, x: Double, y: Double) async throws -> Location {
        let site = try Validation.name(site, field: "site")
        for (field, value) in [("x", x), ("y", y)] where !(value.isFinite && LocationPosition.coordinateRange.contains(value)) {
            throw LobbyError.invalid(field, "must be metres between -1000 and 1000, got \(value).")
        }
        return try await write { context in
            let db = context.db
            try db.lock("location", ids: [id])
            let current = try self.ownedLocation(db, playerId: playerId, id: id)
            if current.site?.lowercased() != site.lowercased() || current.x != x || current.y != y {
                try self.forgetHearings(db, location: id)
                try db.execute("UPDATE location SET positionSite = ?, positionX = ?, positionY = ?, placedAt = ? WHERE id = ?",
                               site, x, y, context.now.unixTime, id)
            } else if current.site != site {
                try db.execute("UPDATE location SET positionSite = ? WHERE id = ?", site, id)
            }
            return try self.locationView(db, id: id, now: context.now, viewer: playerId)
        }
    }

    /// Takes the location's beacon off its site, forgetting what it heard and was heard at.
    public func unplaceLocation(_ playerId: Int64, location id: Int64) async throws -> Location {
        try await write { context in
            let db = context.db
            try db.lock("location", ids: [id])
            _ = try self.ownedLocation(db, playerId: playerId, id: id)
            try self.forgetHearings(db, location: id)
            try db.execute("UPDATE location SET positionSite = NULL, positionX = NULL, positionY = NULL, placedAt = NULL WHERE id = ?", id)
            return try self.locationView(db, id: id, now: context.now, viewer: playerId)
        }
    }

    /// Records what the placed location's beacon heard of the owner's other beacons placed on the
    /// same site. A hearing counts when its identity is one of those locations' in the running
    /// period (``location(_:now:)``), that location is on the air, both were placed where they
    /// stand before it was heard, and it carries an RSSI and a measured power; the rest is
    /// ignored. Several hearings of one location (its old and new identity around a rotation)
    /// count once, the latest. A hearing that meets the other beacon's latest hearing of this one
    /// within ``LobbyConfiguration/crowdPairSeconds`` makes an exchange, at most one per pair in
    /// ``LobbyConfiguration/crowdExchangeSpacing``. Readings out of range are refused (400, naming
    /// `hearings[i].field`), as in encounter reports, and so are more reports a minute per
    /// location than ``LobbyConfiguration/encounterReportsPerMinute`` (429 `tooManyReports`).
    public func reportLocationHearings(_ playerId: Int64, location id: Int64, _ hearings: [EncounterReport]) async throws -> LocationHearingReceipt {
        guard hearings.count <= Self.maximumHearingsPerReport else {
            throw LobbyError.invalid("hearings", "must list at most \(Self.maximumHearingsPerReport) hearings, got \(hearings.count).")
        }
        for (index, hearing) in hearings.enumerated() { try Self.validateReading(hearing, index: index, list: "hearings") }
        if let wait = fairPlay.admitHearings(playerId, location: id, at: clock.now()) {
            throw LobbyError.throttled(.tooManyReports,
                "Location \(id) sent \(configuration.encounterReportsPerMinute) reports of what it hears in the last minute, the most allowed: wait \(Int(wait.rounded(.up))) s.",
                retryAfter: wait)
        }
        return try await write { context in
            let db = context.db
            let now = context.now
            // Which location each hearing names, the latest per location.
            var latest: [Int64: EncounterReport] = [:]
            var ignored = 0
            for hearing in hearings {
                guard hearing.rssi != nil, case .location(let heard) = self.location(hearing, now: now), heard != id else {
                    ignored += 1
                    continue
                }
                if let kept = latest[heard], kept.at >= hearing.at { ignored += 1; continue }
                if latest[heard] != nil { ignored += 1 }
                latest[heard] = hearing
            }
            // The listener and those heard, in id order, so a move cannot slip in between.
            try db.lock("location", ids: ([id] + latest.keys).sorted())
            let listener = try self.ownedLocation(db, playerId: playerId, id: id)
            guard let site = listener.site, let listenerPlacedAt = listener.placedAt else {
                throw LobbyError(.conflict, .locationNotPlaced,
                    "Location \(id) is not placed on a site, so what it hears cannot be paired with a distance: place it first (PUT /v1/locations/\(id)/position, or `nearplay beacon --site … --position x,y`).")
            }
            // The owner's other beacons placed on this site and on the air, and when each was placed.
            var placed: [Int64: Date] = [:]
            for row in try db.fetchAll("""
                SELECT id, placedAt FROM location
                WHERE ownerId = ? AND lower(positionSite) = lower(?) AND onAirAt >= ? AND id <> ? AND placedAt IS NOT NULL
                """, playerId, site, now.addingTimeInterval(-self.configuration.encounterWindow).unixTime, id) {
                placed[try row.get(0, as: Int64.self)] = try row.requiredDate(atIndex: 1, "placedAt")
            }
            var receipt = LocationHearingReceipt(recorded: 0, ignored: ignored, exchanges: 0)
            for (heard, hearing) in latest.sorted(by: { $0.key < $1.key }) {
                let at = min(hearing.at, now)
                guard let rssi = hearing.rssi, let power = hearing.measuredPower?.dBm, let heardPlacedAt = placed[heard],
                      at >= max(listenerPlacedAt, heardPlacedAt)
                else {
                    receipt.ignored += 1
                    continue
                }
                try db.execute("""
                    INSERT INTO locationHearing (listenerId, heardId, at, rssi, measuredPower, variance) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (listenerId, heardId) DO UPDATE SET at = excluded.at, rssi = excluded.rssi,
                        measuredPower = excluded.measuredPower, variance = excluded.variance
                    WHERE excluded.at >= locationHearing.at
                    """, id, heard, at.unixTime, rssi, power, hearing.rssiVariance)
                receipt.recorded += 1
                if try self.recordLocationExchange(db, listener: id, heard: heard, at: at,
                                                   reading: StoredReading(rssi: rssi, measuredPower: power, variance: hearing.rssiVariance)) {
                    receipt.exchanges += 1
                }
            }
            return receipt
        }
    }

    /// The exchange `listener`'s reading of `heard` makes with `heard`'s latest reading of
    /// `listener`, if that one is recent enough and the pair has none within the spacing.
    private func recordLocationExchange(_ db: any SQLSession, listener: Int64, heard: Int64, at: Date, reading mine: StoredReading) throws -> Bool {
        let window = configuration.crowdPairSeconds
        guard let other = try db.fetchOne("""
            SELECT rssi, measuredPower, variance, at FROM locationHearing WHERE listenerId = ? AND heardId = ? AND at BETWEEN ? AND ?
            """, heard, listener, at.addingTimeInterval(-window).unixTime, at.addingTimeInterval(window).unixTime)
        else { return false }
        return try recordSpacedExchange(db, table: "locationExchange", listener: listener, heard: heard, at: at, mine: mine,
                                        theirs: try StoredReading(other, from: 0), theirsAt: try other.requiredDate(atIndex: 3, "at"))
    }

    /// Forgets what a beacon that moved heard and was heard at, and the profile they made.
    private func forgetHearings(_ db: any SQLSession, location id: Int64) throws {
        try db.execute("DELETE FROM locationHearing WHERE listenerId = ? OR heardId = ?", id, id)
        try db.execute("DELETE FROM locationExchange WHERE firstId = ? OR secondId = ?", id, id)
        try db.execute("DELETE FROM crowdProfile WHERE locationId = ? AND source = ?", id, CrowdProfile.Source.beacons.rawValue)
    }

    static let maximumHearingsPerReport = 100
    /// The one site of a solve of one owner's site.
    private static let beaconSite = "beacons"

    /// The beacon exchanges of the last ``LobbyConfiguration/crowdCalibrationWindow`` between
    /// locations still placed on one site of one owner, with the distance their positions give.
    func placedBeaconExchanges(_ db: any SQLSession, since: Date) throws -> [BeaconSiteKey: [StoredExchange]] {
        var sites: [BeaconSiteKey: [StoredExchange]] = [:]
        for row in try db.fetchAll("""
            SELECT e.firstId, e.secondId, e.firstRssi, e.firstMeasuredPower, e.firstVariance,
                e.secondRssi, e.secondMeasuredPower, e.secondVariance,
                a.ownerId, a.positionSite, a.positionX, a.positionY, b.positionX, b.positionY
            FROM locationExchange e
            JOIN location a ON a.id = e.firstId
            JOIN location b ON b.id = e.secondId
            WHERE e.at >= ? AND a.positionSite IS NOT NULL AND lower(b.positionSite) = lower(a.positionSite) AND b.ownerId = a.ownerId
            ORDER BY e.at DESC, e.id DESC
            """, since.unixTime) {
            let key = BeaconSiteKey(owner: try row.get(8, as: Int64.self), site: try row.get(9, as: String.self).lowercased())
            let distance = hypot(try row.get(10, as: Double.self) - row.get(12, as: Double.self),
                                 try row.get(11, as: Double.self) - row.get(13, as: Double.self))
            sites[key, default: []].append(StoredExchange(
                first: try row.get(0, as: Int64.self), second: try row.get(1, as: Int64.self), location: nil,
                firstHearsSecond: try StoredReading(row, from: 2).direction, secondHearsFirst: try StoredReading(row, from: 5).direction,
                distance: distance))
        }
        return sites
    }

    /// Solves each site's beacons (at most ``LobbyConfiguration/crowdDevicesPerSolve`` at once,
    /// as players are) at their known distances: each location's exponent, its error, the pairs
    /// used and the shadowing taken.
    func solveBeaconSites(_ sites: [BeaconSiteKey: [StoredExchange]]) async throws -> [Int64: BeaconSiteSolution] {
        var solved: [Int64: BeaconSiteSolution] = [:]
        for (key, placed) in sites.sorted(by: { ($0.key.owner, $0.key.site) < ($1.key.owner, $1.key.site) }) {
            // Two beacons at one spot give no distance to range at: left out before grouping, so
            // a beacon heard only there gets no profile from the prior alone.
            let usable = placed.filter { ($0.distance ?? 0) >= PathLoss.nearest }
            for group in Self.groups(usable, maximum: configuration.crowdDevicesPerSolve) {
                let devices = group.devices.sorted().map { CrowdCalibration.Device(id: String($0), kind: .locationBeacon) }
                let exchanges = group.exchanges.map { $0.calibrationExchange(site: Self.beaconSite) }
                let solution = try await offload { CrowdCalibration.solve(devices: devices, exchanges: exchanges) }
                guard let site = solution.sites[Self.beaconSite] else { continue }
                let pairs = Set(group.exchanges.map { [$0.first, $0.second] }).count
                let result = BeaconSiteSolution(site: key, exponent: site.exponent, exponentError: site.exponentError, pairs: pairs,
                                                shadowing: site.shadowing)
                for location in group.devices { solved[location] = result }
            }
        }
        return solved
    }
}

/// An owner's site: the beacons one owner placed under one label.
struct BeaconSiteKey: Hashable, Sendable {
    var owner: Int64
    var site: String
}

/// What the solve made of one site's beacons (of one group of them, on a site with more than
/// one solve takes).
struct BeaconSiteSolution: Sendable {
    var site: BeaconSiteKey
    var exponent: Double
    var exponentError: Double
    var pairs: Int
    var shadowing: Double?
}

/// What the lobby made of one report of hearings.
public struct LocationHearingReceipt: Codable, Sendable, Equatable {
    /// Hearings of the owner's locations placed on the same site.
    public var recorded: Int
    public var ignored: Int
    /// Exchanges the hearings completed.
    public var exchanges: Int
}
