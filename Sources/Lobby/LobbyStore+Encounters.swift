import BeaconFrames
import Foundation
import GRDB  // for the GRDB callers' overloads at the bottom only
import LobbyDatabase

extension LobbyStore {
    /// Largest batch of sightings one report may carry.
    public static let maximumSightingsPerReport = 1000

    /// The public profile behind a beacon identity, for a viewer that could have heard it: the
    /// identity must be a player's whose agent is on the air (spoke to the lobby within
    /// ``LobbyConfiguration/encounterWindow``). Unknown identities, deleted players, players off
    /// the air and players blocked either way all answer "not found", and each such answer spends
    /// one of the viewer's ``LobbyConfiguration/identityGuessesPerHour``; with none left, only
    /// players the viewer already met are answered, the rest refused with 429. Resolutions are
    /// limited to ``LobbyConfiguration/resolutionsPerMinute``.
    public func resolve(viewer: Int64, beacon: BeaconIdentity) async throws -> PublicProfile {
        let deployment = configuration.deploymentUUID
        let now = clock.now()
        if let wait = fairPlay.admitResolution(viewer, at: now) {
            throw LobbyError.throttled(.tooManyResolutions,
                "You looked up \(configuration.resolutionsPerMinute) beacon identities in the last minute, the most allowed: wait \(Int(wait.rounded(.up))) s.",
                retryAfter: wait)
        }
        let found: PublicProfile? = try await read { db, now in
            guard let (uuid, major, minor) = beacon.iBeaconFields, uuid == deployment else { return nil }
            // Players on the air whom the viewer does not block (nor they the viewer); when two
            // players' identities collide in this period, the one the viewer met before, if only
            // one was.
            var candidates = try self.players(db, major: major, minor: minor, heardAt: now, now: now).filter { player in
                try self.isOnAir(player.id, activeAt: player.activeAt, at: now) && !self.isBlocked(db, viewer, player.id)
            }.map(\.id)
            if candidates.count > 1 {
                let met = try candidates.filter { try self.hasMet(db, viewer, $0) }
                if met.count == 1 { candidates = met }
            }
            guard let target = candidates.first else { return nil }
            guard candidates.count == 1 else {
                let left = self.configuration.rotationPeriod.end(of: self.configuration.rotationPeriod.index(at: now)).timeIntervalSince(now)
                throw LobbyError(.conflict, .ambiguousIdentity,
                    "Two players near you advertise \(beacon) in this period; both identities change in \(Int(left.rounded(.up))) s: ask again then.")
            }
            if !self.fairPlay.hasGuesses(viewer, at: now), try !self.hasMet(db, viewer, target) {
                throw self.guessesSpent(viewer, at: now)
            }
            guard let record = try Query.player(db, id: target) else { return nil }
            return try self.profile(db, record, now: now)
        }
        if let found { return found }
        guard fairPlay.spendGuess(viewer, at: now) else { throw guessesSpent(viewer, at: now) }
        throw LobbyError(.notFound, .beaconNotFound, "No player advertises \(beacon).")
    }

    func guessesSpent(_ player: Int64, at now: Date) -> LobbyError {
        let wait = fairPlay.guessWait(player, at: now)
        return LobbyError.throttled(.tooManyUnknownIdentities,
            "You named \(configuration.identityGuessesPerHour) beacon identities in the last hour that no player near you advertises, the most allowed: wait \(Int(wait.rounded(.up))) s. An agent hears few such identities; check that it scans with the lobby's deployment UUID.",
            retryAfter: wait)
    }

    /// Whether the player's agent spoke to the lobby within ``LobbyConfiguration/encounterWindow``
    /// before `at` (or since).
    func isOnAir(_ player: Int64, activeAt written: Date?, at: Date) -> Bool {
        let since = at.addingTimeInterval(-configuration.encounterWindow)
        if let active = fairPlay.lastActive(player), active >= since { return true }
        return (written ?? .distantPast) >= since
    }

    /// Whether `observer` ever reported `seen`, or unlocked it.
    func hasMet(_ db: any SQLSession, _ observer: Int64, _ seen: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM encounter WHERE observerId = ?1 AND seenId = ?2)
                OR EXISTS (SELECT 1 FROM unlock WHERE ownerId = ?1 AND unlockedId = ?2)
            """, observer, seen) ?? false
    }

    /// Notes that the player's agent is speaking to the lobby now (any authenticated request, an
    /// open event stream): what makes its identity one others could have heard.
    public func noteActive(_ playerId: Int64) {
        guard fairPlay.noteActive(playerId, at: clock.now()), isShared else { return }
        // Other instances learn of the activity only from the database: write it within a fifth
        // of a second rather than with this instance's next write, which may be long in coming.
        // One flush carries every player noted meanwhile.
        guard activityFlush.begin() else { return }
        Task { [self] in
            try? await Task.sleep(for: .milliseconds(200))
            activityFlush.end()
            do { try await write { _ in } } catch { logger.warning("Cannot write players' activity down: \(error)") }
        }
    }

    /// Records which players (and locations, ``recordLocationSighting(_:reporter:_:)``) the reporter
    /// saw. Sightings of other deployments' UUIDs, of unknown identities or deleted players, of
    /// players whose agent is off the air (it did not speak to the lobby within
    /// ``LobbyConfiguration/encounterWindow`` before the sighting) and of the reporter itself are
    /// counted as ignored. Times in the future are taken as now.
    ///
    /// A player could only have heard an identity that someone advertises: each sighting of the
    /// deployment that leads to no player (or location) on the air spends one of the reporter's
    /// ``LobbyConfiguration/identityGuessesPerHour``, and with none left only players the reporter
    /// already met are recorded. Reports are limited to
    /// ``LobbyConfiguration/encounterReportsPerMinute`` (429 beyond; the agent's outbox retries).
    ///
    /// With a `key` (the agent's outbox sends one with every report), a report repeating an earlier
    /// one of this reporter with the same key records nothing and is answered with the first
    /// receipt, for ``LobbyConfiguration/requestKeyLifetime``.
    public func recordEncounters(reporter: Int64, _ sightings: [EncounterReport], key: String? = nil) async throws -> EncounterReceipt {
        if let key, !Validation.isIdempotencyKey(key) { throw LobbyError.invalidKey(key) }
        guard sightings.count <= Self.maximumSightingsPerReport else {
            throw LobbyError.invalid("sightings", "at most \(Self.maximumSightingsPerReport) per report, got \(sightings.count).")
        }
        // Majors and minors are in range by type (``EncounterReport`` refuses others as it decodes).
        for (index, sighting) in sightings.enumerated() {
            if let distance = sighting.distance, !(distance.isFinite && distance >= 0) {
                throw LobbyError.invalid("sightings[\(index)].distance", "must be a distance in metres, 0 or more.")
            }
            try Self.validateReading(sighting, index: index)
        }
        let deployment = configuration.deploymentUUID
        if let wait = fairPlay.admitReport(reporter, at: clock.now()) {
            throw LobbyError.throttled(.tooManyReports,
                "You sent \(configuration.encounterReportsPerMinute) encounter reports in the last minute, the most allowed: wait \(Int(wait.rounded(.up))) s.",
                retryAfter: wait)
        }
        return try await write { context in
            let db = context.db
            if let key {
                // The agent's outbox may send a report again while the first is still being
                // recorded: lock the reporter first, so that the second finds the first's key
                // (instead of recording the sightings again and failing on the key).
                try db.lock("player", ids: [reporter])
                if let first = try db.fetchOne("""
                    SELECT recorded, ignored FROM encounterReport WHERE reporterId = ? AND key = ?
                    """, reporter, key) {
                    return EncounterReceipt(recorded: try first.get(0, as: Int.self), ignored: try first.get(1, as: Int.self))
                }
            }
            var recorded = 0
            var guessing = self.fairPlay.hasGuesses(reporter, at: context.now)
            // One peerReading per player seen and report (its newest reading), however many
            // sightings of that player the report carries.
            var readings: [Int64: EncounterReport] = [:]
            var refused: [SightingRefusal] = []
            for (index, sighting) in sightings.enumerated() {
                guard let (uuid, major, minor) = sighting.beacon.iBeaconFields else { continue }
                if uuid == self.locationUUID || (uuid == deployment && major == LocationBeacon.major) {
                    switch try self.recordLocationSighting(&context, reporter: reporter, sighting) {
                    case .location:
                        recorded += 1
                    case .refused(let reason):
                        refused.append(SightingRefusal(index: index, reason: reason))
                        self.presenceRefusals[reason.rawValue]?.increment()
                    case .unknown:
                        if guessing { guessing = self.fairPlay.spendGuess(reporter, at: context.now) }
                    }
                    continue
                }
                guard uuid == deployment else { continue }
                let at = min(sighting.at, context.now)
                // A player on the air; when two players' identities collide in the period, the
                // one the reporter met before, if only one was; otherwise neither is recorded.
                var candidates = try self.players(db, major: major, minor: minor, heardAt: at, now: context.now)
                    .filter { self.isOnAir($0.id, activeAt: $0.activeAt, at: at) }.map(\.id)
                if candidates.count > 1 {
                    let met = try candidates.filter { try self.hasMet(db, reporter, $0) }
                    if met.count != 1 { continue }
                    candidates = met
                }
                guard let seen = candidates.first else {
                    if guessing { guessing = self.fairPlay.spendGuess(reporter, at: context.now) }
                    continue
                }
                guard seen != reporter else { continue }
                if !guessing, try !self.hasMet(db, reporter, seen) { continue }
                try db.execute("""
                    INSERT INTO encounter (observerId, seenId, lastSeenAt, distance, rssi, measuredPower, rssiVariance)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (observerId, seenId) DO UPDATE SET lastSeenAt = excluded.lastSeenAt,
                        distance = excluded.distance, rssi = excluded.rssi, measuredPower = excluded.measuredPower,
                        rssiVariance = excluded.rssiVariance
                        WHERE excluded.lastSeenAt >= encounter.lastSeenAt
                    """, reporter, seen, at.unixTime, sighting.distance,
                    sighting.rssi, sighting.measuredPower, sighting.rssiVariance)
                if sighting.rssi != nil, readings[seen].map({ $0.at <= sighting.at }) ?? true { readings[seen] = sighting }
                recorded += 1
            }
            for (seen, sighting) in readings.sorted(by: { $0.key < $1.key }) {
                // A reading goes nowhere between players of whom one blocked the other.
                guard !(try self.isBlocked(db, reporter, seen)) else { continue }
                try self.deliverReading(&context, reporter: reporter, seen: seen, sighting)
                try self.recordExchange(db, reporter: reporter, seen: seen, sighting, now: context.now)
            }
            let receipt = EncounterReceipt(recorded: recorded, ignored: sightings.count - recorded, refused: refused.isEmpty ? nil : refused)
            if let key {
                try db.execute("""
                    INSERT INTO encounterReport (reporterId, key, recorded, ignored, createdAt) VALUES (?, ?, ?, ?, ?)
                    """, reporter, key, receipt.recorded, receipt.ignored, context.now.unixTime)
            }
            return receipt
        }
    }

    /// A player's statistics, for viewers who currently see it or have unlocked it (and itself).
    public func stats(viewer: Int64, username: String) async throws -> PlayerStats {
        try await read { db, now in
            try self.statistics(db, playerId: self.statisticsTarget(db, viewer: viewer, username: username, now: now).id!, now: now)
        }
    }

    /// Whether `viewer` currently sees `target` (an encounter within the window) or has unlocked it.
    func canInteract(_ db: any SQLSession, viewer: Int64, with target: Int64, now: Date) throws -> Bool {
        if viewer == target { return true }
        return try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM encounter WHERE observerId = ?1 AND seenId = ?2 AND lastSeenAt >= ?3)
                OR EXISTS (SELECT 1 FROM unlock WHERE ownerId = ?1 AND unlockedId = ?2)
            """, viewer, target, now.addingTimeInterval(-configuration.encounterWindow).unixTime) ?? false
    }

    func profile(_ db: any SQLSession, _ record: PlayerRecord, now: Date) throws -> PublicProfile {
        PublicProfile(
            username: record.username!, firstName: record.firstName!, lastName: record.lastName!,
            photoURL: photoURL(record), stats: try statistics(db, playerId: record.id!, now: now),
            radioOffsets: try radioOffsets(db, playerId: record.id!))
    }

    /// Results of the games the player finished within the statistics span, from the `result`
    /// rows recorded when each game finished: one index range for the counts, and the best score
    /// from those games' scores. (Recomputing each game's rounds took most of a beacon
    /// resolution's time with a 1,000,000-result past.)
    func statistics(_ db: any SQLSession, playerId: Int64, now: Date) throws -> PlayerStats {
        let since = now.addingTimeInterval(-configuration.statisticsSpan).unixTime
        let counts = try db.fetchOne("""
            SELECT COUNT(*), COALESCE(SUM(CASE WHEN outcome = \(GameOutcome.win.sqlLiteral) THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN outcome = \(GameOutcome.loss.sqlLiteral) THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN outcome = \(GameOutcome.draw.sqlLiteral) THEN 1 ELSE 0 END), 0), COALESCE(SUM(roundsWon), 0)
            FROM result WHERE playerId = ? AND at >= ?
            """, playerId, since)
        let best = try db.fetchValue(Int.self, """
            SELECT MAX(s.score) FROM result r JOIN score s ON s.gameId = r.gameId AND s.playerId = r.playerId
            WHERE r.playerId = ? AND r.at >= ?
            """, playerId, since)
        func count(_ index: Int) throws -> Int { try counts?.get(index, as: Int?.self) ?? 0 }
        return PlayerStats(
            spanDays: configuration.statisticsSpan / 86400, gamesPlayed: try count(0),
            gamesWon: try count(1), gamesLost: try count(2), gamesDrawn: try count(3), roundsWon: try count(4), bestScore: best)
    }
}
