import Foundation
import LobbyDatabase
import Ranging

/// Calibration from the crowd: the lobby pairs the readings players report of each other into
/// two-way exchanges and, every few minutes, solves every player's radio offsets and every
/// location's path-loss exponent from them (``CrowdCalibration``, whose comment says what
/// exchanges can and cannot pin).
///
/// An exchange is recorded when a report's reading of a player meets that player's reading of
/// the reporter (its latest encounter row) taken within ``LobbyConfiguration/crowdPairSeconds``,
/// at most one per pair in ``LobbyConfiguration/crowdExchangeSpacing``; its site is the location
/// both were present at then (each reported its beacon within
/// ``LobbyConfiguration/encounterWindow``), or the open air. Blocked pairs record and contribute
/// nothing; a deleted player's exchanges and offsets go with its account.
extension LobbyStore {
    /// The variance (dB²) taken for a reading reported without one: a filtered RSSI within
    /// about 2 dB. A reading that claimed 0 would count as exact.
    static let unknownReadingVariance = 4.0
    /// The site of exchanges at no location.
    static let openAirSite = "open"

    /// Records the exchange `reporter`'s reading of `seen` makes with `seen`'s latest reading of
    /// `reporter`, if that one is recent enough and the pair has no exchange within the spacing.
    /// Called after a report's sightings are recorded, so the report's own location sightings
    /// count as presence, and only for a pair of whom neither blocked the other.
    func recordExchange(_ db: any SQLSession, reporter: Int64, seen: Int64, _ sighting: EncounterReport, now: Date) throws {
        guard let rssi = sighting.rssi, let power = sighting.measuredPower?.dBm else { return }
        let at = min(sighting.at, now)
        let window = configuration.crowdPairSeconds
        guard let other = try db.fetchOne("""
            SELECT rssi, measuredPower, rssiVariance, lastSeenAt FROM encounter
            WHERE observerId = ? AND seenId = ? AND rssi IS NOT NULL AND measuredPower IS NOT NULL AND lastSeenAt BETWEEN ? AND ?
            """, seen, reporter, at.addingTimeInterval(-window).unixTime, at.addingTimeInterval(window).unixTime)
        else { return }
        try recordSpacedExchange(db, table: "crowdExchange", listener: reporter, heard: seen, at: at,
                                 mine: StoredReading(rssi: rssi, measuredPower: power, variance: sighting.rssiVariance),
                                 theirs: try StoredReading(other, from: 0), theirsAt: try other.requiredDate(atIndex: 3, "lastSeenAt")) { time in
            // Both present at one location: the one both were seen at most recently.
            let since = time.addingTimeInterval(-self.configuration.encounterWindow).unixTime
            let site = try db.fetchValue(Int64.self, """
                SELECT a.locationId FROM locationSighting a
                JOIN locationSighting b ON b.locationId = a.locationId AND b.playerId = ?
                WHERE a.playerId = ? AND a.lastSeenAt >= ? AND b.lastSeenAt >= ?
                ORDER BY CASE WHEN a.lastSeenAt < b.lastSeenAt THEN a.lastSeenAt ELSE b.lastSeenAt END DESC, a.locationId
                LIMIT 1
                """, seen, reporter, since, since)
            return [("locationId", site.sqlValue)]
        }
    }

    /// What both calibrations do with a reading and the latest one the other way (players'
    /// exchanges in `crowdExchange`, location beacons' in `locationExchange`): one exchange at the
    /// later of the two times, the device with the smaller id first, unless the pair has one
    /// within ``LobbyConfiguration/crowdExchangeSpacing``. `extra` gives the table's own columns
    /// for that time. Answers whether it recorded one.
    @discardableResult
    func recordSpacedExchange(_ db: any SQLSession, table: String, listener: Int64, heard: Int64, at: Date,
                              mine: StoredReading, theirs: StoredReading, theirsAt: Date,
                              extra: (Date) throws -> [(column: String, value: SQLValue)] = { _ in [] }) throws -> Bool {
        let time = max(at, theirsAt)
        let (first, second) = (min(listener, heard), max(listener, heard))
        guard try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM \(table) WHERE firstId = ? AND secondId = ? AND at > ?)
            """, first, second, time.addingTimeInterval(-configuration.crowdExchangeSpacing).unixTime) != true
        else { return false }
        let (firstReading, secondReading) = listener == first ? (mine, theirs) : (theirs, mine)
        let columns = try extra(time)
        let values: [SQLValue] = [first.sqlValue, second.sqlValue, time.unixTime.sqlValue]
            + firstReading.sqlValues + secondReading.sqlValues + columns.map(\.value)
        _ = try db.execute("""
            INSERT INTO \(table) (firstId, secondId, at, firstRssi, firstMeasuredPower, firstVariance,
                secondRssi, secondMeasuredPower, secondVariance\(columns.map { ", " + $0.column }.joined()))
            VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))
            """, values)
        return true
    }

    /// Deletes exchanges older than ``LobbyConfiguration/crowdCalibrationWindow``.
    public func pruneCrowdExchanges() async throws {
        let window = configuration.crowdCalibrationWindow
        try await write { context in
            let oldest = context.now.addingTimeInterval(-window).unixTime
            try context.db.execute("DELETE FROM crowdExchange WHERE at < ?", oldest)
            try context.db.execute("DELETE FROM locationExchange WHERE at < ?", oldest)
            try context.db.execute("DELETE FROM locationHearing WHERE at < ?", oldest)
        }
    }

    /// Solves every player's radio offsets and every location's exponent from the exchanges of
    /// the last ``LobbyConfiguration/crowdCalibrationWindow`` and publishes them, replacing the
    /// last solve's: offsets for players with at least ``LobbyConfiguration/crowdMinimumPairs``
    /// partners, a crowd profile for each location with exchanges. Each player counts with its
    /// ``LobbyConfiguration/crowdPairsPerDevice`` most recent partners at most (a pair takes
    /// part when it is among both players' most recent), so no one outweighs the crowd; the solve
    /// itself weighs down pairs that read far off the rest (a liar, a broken radio).
    @discardableResult
    public func solveCrowdCalibration() async throws -> CrowdSolveSummary {
        let started = ContinuousClock.now
        let configuration = self.configuration
        try await pruneCrowdExchanges()
        let rows: [StoredExchange] = try await read { db, now in
            try db.fetchAll("""
                SELECT e.firstId, e.secondId, e.locationId, e.firstRssi, e.firstMeasuredPower, e.firstVariance,
                    e.secondRssi, e.secondMeasuredPower, e.secondVariance
                FROM crowdExchange e
                WHERE e.at >= ? AND NOT EXISTS (SELECT 1 FROM block b
                    WHERE (b.blockerId = e.firstId AND b.blockedId = e.secondId) OR (b.blockerId = e.secondId AND b.blockedId = e.firstId))
                ORDER BY e.at DESC, e.id DESC
                """, now.addingTimeInterval(-configuration.crowdCalibrationWindow).unixTime).map { row in
                StoredExchange(first: try row.get(0, as: Int64.self), second: try row.get(1, as: Int64.self), location: try row.get(2, as: Int64?.self),
                               firstHearsSecond: try StoredReading(row, from: 3).direction, secondHearsFirst: try StoredReading(row, from: 6).direction)
            }
        }
        let (capped, _) = Self.capped(rows, perDevice: configuration.crowdPairsPerDevice)
        // Players who never met are solved apart, and a crowd too large for one solve in groups
        // of neighbours: the solve's cost grows as the cube of its players.
        var offsets: [Int64: CrowdCalibration.DeviceOffsets] = [:]
        var siteExponents: [String: CrowdCalibration.SiteExponent] = [:]
        var partners: [Int64: Set<Int64>] = [:]
        var kept: [StoredExchange] = []
        var downweighted = 0
        let groups = Self.groups(capped, maximum: configuration.crowdDevicesPerSolve)
        for group in groups {
            let devices = group.devices.sorted().map { CrowdCalibration.Device(id: String($0)) }
            let exchanges = group.exchanges.map { $0.calibrationExchange(site: $0.location.map(String.init) ?? Self.openAirSite) }
            let solution = try await offload { CrowdCalibration.solve(devices: devices, exchanges: exchanges) }
            for (id, found) in solution.devices { if let player = Int64(id) { offsets[player] = found } }
            // A location whose players fell into several groups: the best-pinned exponent.
            for (site, found) in solution.sites where siteExponents[site].map({ found.exponentError < $0.exponentError }) ?? true {
                siteExponents[site] = found
            }
            downweighted += solution.downweighted
            kept += group.exchanges
            for exchange in group.exchanges {
                partners[exchange.first, default: []].insert(exchange.second)
                partners[exchange.second, default: []].insert(exchange.first)
            }
        }
        var pairsBySite: [Int64: Set<[Int64]>] = [:]
        for exchange in kept { if let location = exchange.location { pairsBySite[location, default: []].insert([exchange.first, exchange.second]) } }
        // Beacons placed on one site, at known distances: what pins an exponent.
        let placed = try await read { db, now in
            try self.placedBeaconExchanges(db, since: now.addingTimeInterval(-configuration.crowdCalibrationWindow))
        }
        let beaconSites = try await solveBeaconSites(placed)
        // One profile per location: the better pinned of its beacons' and its players'.
        var profiles: [Int64: (exponent: Double, error: Double, pairs: Int, source: CrowdProfile.Source, shadowing: Double?)] = [:]
        for (location, pairs) in pairsBySite {
            guard let site = siteExponents[String(location)] else { continue }
            profiles[location] = (site.exponent, site.exponentError, pairs.count, .players, nil)
        }
        for (location, site) in beaconSites where profiles[location].map({ site.exponentError <= $0.error }) ?? true {
            profiles[location] = (site.exponent, site.exponentError, site.pairs, .beacons, site.shadowing)
        }
        let (publishedProfiles, publishedPartners, solvedOffsets) = (profiles, partners, offsets)

        let published: Int = try await write { context in
            let db = context.db
            try db.execute("DELETE FROM radioOffsets")
            try db.execute("DELETE FROM crowdProfile")
            var published = 0
            for (player, others) in publishedPartners.sorted(by: { $0.key < $1.key }) where others.count >= configuration.crowdMinimumPairs {
                guard let offsets = solvedOffsets[player],
                      try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM player WHERE id = ? AND deletedAt IS NULL)", player) == true
                else { continue }
                try db.execute("""
                    INSERT INTO radioOffsets (playerId, transmit, receive, transmitError, receiveError, pairs, solvedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, player, Self.bounded(offsets.transmit, -30...30), Self.bounded(offsets.receive, -30...30),
                    offsets.transmitError, offsets.receiveError, others.count, context.now.unixTime)
                published += 1
            }
            for (location, profile) in publishedProfiles.sorted(by: { $0.key < $1.key }) {
                try db.execute("""
                    INSERT INTO crowdProfile (locationId, exponent, exponentError, pairs, solvedAt, source, shadowing) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, location, Self.bounded(profile.exponent, 1...6), profile.error, profile.pairs, context.now.unixTime,
                    profile.source.rawValue, profile.shadowing)
            }
            return published
        }
        let elapsed = ContinuousClock.now - started
        let summary = CrowdSolveSummary(
            players: partners.count, groups: groups.count, exchanges: kept.count, pairs: Set(kept.map { [$0.first, $0.second] }).count,
            downweighted: downweighted, published: published, locations: profiles.count,
            beaconSites: Set(beaconSites.values.map(\.site)).count, beacons: beaconSites.count,
            milliseconds: Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        logger.info("crowd calibration solved: \(summary.players) devices in \(summary.groups) groups, \(summary.exchanges) exchanges (\(summary.pairs) pairs), \(summary.downweighted) downweighted, \(summary.published) players published, \(summary.beacons) beacons on \(summary.beaconSites) sites, \(summary.locations) locations, \(String(format: "%.1f", summary.milliseconds)) ms")
        return summary
    }

    /// The exchanges of pairs among both players' `perDevice` most recent partners (`rows` come
    /// newest first), and each player's partners among them.
    static func capped(_ rows: [StoredExchange], perDevice: Int) -> (kept: [StoredExchange], partners: [Int64: Set<Int64>]) {
        var recent: [Int64: [Int64]] = [:]
        var seen: Set<[Int64]> = []
        for row in rows where seen.insert([row.first, row.second]).inserted {
            recent[row.first, default: []].append(row.second)
            recent[row.second, default: []].append(row.first)
        }
        let allowed = recent.mapValues { Set($0.prefix(perDevice)) }
        let kept = rows.filter { allowed[$0.first]?.contains($0.second) == true && allowed[$0.second]?.contains($0.first) == true }
        var partners: [Int64: Set<Int64>] = [:]
        for row in kept {
            partners[row.first, default: []].insert(row.second)
            partners[row.second, default: []].insert(row.first)
        }
        return (kept, partners)
    }

    /// The players of `rows` in groups of at most `maximum`, with the exchanges inside each: the
    /// players connected by exchanges, and a connected crowd larger than `maximum` cut in the
    /// order a breadth-first walk meets them, so each group holds neighbours. Exchanges between
    /// two groups are left out. Deterministic: walks start from the lowest player id.
    static func groups(_ rows: [StoredExchange], maximum: Int) -> [(devices: Set<Int64>, exchanges: [StoredExchange])] {
        var neighbours: [Int64: Set<Int64>] = [:]
        for row in rows {
            neighbours[row.first, default: []].insert(row.second)
            neighbours[row.second, default: []].insert(row.first)
        }
        var groupOf: [Int64: Int] = [:]
        var sizes: [Int] = []
        for start in neighbours.keys.sorted() where groupOf[start] == nil {
            groupOf[start] = sizes.count
            sizes.append(1)
            var queue = [start], head = 0
            while head < queue.count {
                let device = queue[head]
                head += 1
                for other in (neighbours[device] ?? []).sorted() where groupOf[other] == nil {
                    if sizes[sizes.count - 1] >= maximum { sizes.append(0) }
                    groupOf[other] = sizes.count - 1
                    sizes[sizes.count - 1] += 1
                    queue.append(other)
                }
            }
        }
        var groups = Array(repeating: (devices: Set<Int64>(), exchanges: [StoredExchange]()), count: sizes.count)
        for (device, group) in groupOf { groups[group].devices.insert(device) }
        for row in rows {
            guard let group = groupOf[row.first], groupOf[row.second] == group else { continue }
            groups[group].exchanges.append(row)
        }
        return groups
    }

    static func bounded(_ value: Double, _ range: ClosedRange<Double>) -> Double {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// The player's offsets as the last solve published them; `notFound` (radioOffsetsNotSolved)
    /// before it had enough partners.
    public func radioOffsets(_ playerId: Int64) async throws -> RadioOffsets {
        let minimum = configuration.crowdMinimumPairs
        let found = try await read { db, _ in try self.radioOffsets(db, playerId: playerId) }
        guard let found else {
            throw LobbyError(.notFound, .radioOffsetsNotSolved,
                "The lobby has not solved your radio offsets yet: they need two-way readings with at least \(minimum) players near you, and are solved every few minutes. Until then, range with the defaults.")
        }
        return found
    }

    func radioOffsets(_ db: any SQLSession, playerId: Int64) throws -> RadioOffsets? {
        try db.fetchOne("""
            SELECT transmit, receive, transmitError, receiveError, pairs, solvedAt FROM radioOffsets WHERE playerId = ?
            """, playerId).map { row in
            RadioOffsets(transmit: try row.get(0, as: Double.self), receive: try row.get(1, as: Double.self),
                         transmitError: try row.get(2, as: Double.self), receiveError: try row.get(3, as: Double.self),
                         pairs: try row.get(4, as: Int.self), solvedAt: try row.requiredDate(atIndex: 5, "solvedAt"))
        }
    }

    func crowdProfile(_ db: any SQLSession, locationId: Int64) throws -> CrowdProfile? {
        try db.fetchOne("""
            SELECT exponent, exponentError, pairs, solvedAt, source, shadowing FROM crowdProfile WHERE locationId = ?
            """, locationId).map { row in
            CrowdProfile(exponent: try row.get(0, as: Double.self), exponentError: try row.get(1, as: Double.self),
                         pairs: try row.get(2, as: Int.self), solvedAt: try row.requiredDate(atIndex: 3, "solvedAt"),
                         source: CrowdProfile.Source(rawValue: try row.get(4, as: String.self)) ?? .players,
                         shadowing: try row.get(5, as: Double?.self))
        }
    }
}

/// One direction of a stored exchange: what one device read of the other.
struct StoredReading: Sendable {
    var rssi: Double
    var measuredPower: Double
    /// Nil when the reading came without one (``LobbyStore/unknownReadingVariance`` is taken).
    var variance: Double?

    init(rssi: Double, measuredPower: Double, variance: Double?) {
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.variance = variance
    }

    /// The reading in `row`'s three columns from `index`: RSSI, measured power, variance.
    init(_ row: SQLRow, from index: Int) throws {
        self.init(rssi: try row.get(index, as: Double.self), measuredPower: try row.get(index + 1, as: Double.self),
                  variance: try row.get(index + 2, as: Double?.self))
    }

    var direction: TwoWayRanging.Direction {
        TwoWayRanging.Direction(filteredRSSI: rssi, measuredPower: measuredPower, filterVariance: variance ?? LobbyStore.unknownReadingVariance)
    }

    var sqlValues: [SQLValue] { [rssi.sqlValue, measuredPower.sqlValue, variance.sqlValue] }
}

/// One stored exchange, as the solve reads it.
struct StoredExchange: Sendable {
    var first: Int64
    var second: Int64
    var location: Int64?
    var firstHearsSecond: TwoWayRanging.Direction
    var secondHearsFirst: TwoWayRanging.Direction
    /// Between placed location beacons: the distance their positions give (m).
    var distance: Double? = nil

    /// The exchange as the solver takes it, at `site`.
    func calibrationExchange(site: String) -> CrowdCalibration.Exchange {
        CrowdCalibration.Exchange(first: String(first), second: String(second), firstHearsSecond: firstHearsSecond,
                                  secondHearsFirst: secondHearsFirst, distance: distance, site: site)
    }
}

/// What one crowd solve used and published.
public struct CrowdSolveSummary: Sendable, Equatable {
    /// Players in the solve, the groups they were solved in (players who never met apart, a
    /// crowd larger than ``LobbyConfiguration/crowdDevicesPerSolve`` cut), and the exchanges and
    /// distinct pairs it used (after the cap, inside the groups).
    public var players: Int
    public var groups: Int
    public var exchanges: Int
    public var pairs: Int
    /// Pair equations the robust weights counted at less than half.
    public var downweighted: Int
    /// Players given offsets, and locations given a crowd profile.
    public var published: Int
    public var locations: Int
    /// Sites of placed beacons solved, and the beacons on them.
    public var beaconSites: Int
    public var beacons: Int
    public var milliseconds: Double
}
