import Foundation
import GRDB
import Minigames
import SensorSamples

/// Tournaments at locations: each location runs a daily, a weekly and a monthly one, in windows of
/// its time zone (``TournamentCalendar``). The lobby creates them (``settleTournaments()``, which
/// the lobby server runs on a timer and every tournament request runs when one is due) and closes
/// them at the end of their window: the best total wins, ties going to whoever reached it first,
/// and the winner gains every participant's unlocked players as persistent ones
/// (``RewardRule/winnerTakesUnlocks(participants:winner:before:)``).
///
/// For boards and achievements: ``tournamentStandings(_:)`` gives a tournament's ranked entries
/// (standard competition ranking, fixed in `tournamentEntry.rank` when it closes),
/// ``tournamentsWon(_:)`` counts a player's wins, and the closing transaction
/// (`closeTournament`) records `tournament.winnerId` and `closedAt` and returns the
/// ``TournamentOutcome``: the place where checks on a tournament's result (a first tournament
/// win) belong, inside that same transaction.
extension LobbyStore {
    /// Closes the tournaments whose window has ended and starts every location's tournaments for
    /// the current windows. Runs in one transaction; answers what it did.
    @discardableResult
    public func settleTournaments() async throws -> TournamentSweep {
        try await write { context in try self.settle(&context, everyLocation: true) }
    }

    /// Closes the tournaments due and starts the current windows' tournaments of every location
    /// (or only of the locations where one closed).
    func settle(_ context: inout WriteContext, everyLocation: Bool) throws -> TournamentSweep {
        let closed = try closeDueTournaments(&context)
        let locations = everyLocation
            ? try Int64.fetchAll(context.db.grdb.cached("SELECT id FROM location ORDER BY id")) : Set(closed.map(\.location)).sorted()
        var created = 0
        for location in locations { created += try scheduleTournaments(&context, locationId: location) }
        return TournamentSweep(closed: closed, created: created)
    }

    /// ``settleTournaments()`` when a tournament's window has ended and it is still open, so that
    /// answers never show a tournament running past its end.
    func settleTournamentsIfDue() async throws {
        let due = try await readGRDB { db, now in
            try Bool.fetchOne(db.cached("SELECT EXISTS (SELECT 1 FROM tournament WHERE state = 'open' AND endsAt <= ?)"),
                              arguments: [now.unixTime]) ?? false
        }
        if due { try await settleTournaments() }
    }

    /// The tournaments of a location, running ones first then the latest closed (at most 50).
    public func tournaments(location id: Int64) async throws -> [TournamentSummary] {
        try await settleTournamentsIfDue()
        return try await readGRDB { db, _ in
            guard try Bool.fetchOne(db.cached("SELECT EXISTS (SELECT 1 FROM location WHERE id = ?)"), arguments: [id]) == true else {
                throw LobbyError.locationNotFound(id)
            }
            let ids = try Int64.fetchAll(db.cached("""
                SELECT id FROM tournament WHERE locationId = ? ORDER BY state = 'closed', endsAt DESC, id DESC LIMIT 50
                """), arguments: [id])
            return try ids.map { try self.tournamentSummary(db, id: $0) }
        }
    }

    /// One tournament with its standings.
    public func tournament(_ id: Int64) async throws -> TournamentSummary {
        try await settleTournamentsIfDue()
        return try await readGRDB { db, _ in
            var summary = try self.tournamentSummary(db, id: id)
            summary.standings = try self.standings(db, tournamentId: id)
            return summary
        }
    }

    /// A tournament's entries, best first, ranked by total (ties share a rank: 1, 2, 2, 4). Once
    /// it is closed, the ranks are the ones fixed when it closed.
    public func tournamentStandings(_ id: Int64) async throws -> [TournamentStanding] {
        try await readGRDB { db, _ in
            _ = try self.tournamentSummary(db, id: id)
            return try self.standings(db, tournamentId: id)
        }
    }

    /// How many tournaments `playerId` has won.
    public func tournamentsWon(_ playerId: Int64) async throws -> Int {
        try await readGRDB { db, _ in
            try Int.fetchOne(db.cached("SELECT COUNT(*) FROM tournament WHERE winnerId = ?"), arguments: [playerId]) ?? 0
        }
    }

    /// Enters `playerId` in a running tournament; entering again answers the entry as it is. The
    /// player must be at the tournament's location: its agent must have reported the location's
    /// beacon within ``LobbyConfiguration/encounterWindow`` (`forbidden`, `notNearLocation`
    /// otherwise). The entry's rounds are the tournament's minigames, each with a plan drawn now.
    public func joinTournament(_ playerId: Int64, tournament id: Int64) async throws -> TournamentEntryReceipt {
        try await write { context in
            _ = try self.settle(&context, everyLocation: false)
            let db = context.db.grdb
            _ = try self.livePlayer(db, id: playerId)
            guard let tournament = try Row.fetchOne(db.cached("""
                SELECT t.locationId, t.state, l.name FROM tournament t JOIN location l ON l.id = t.locationId WHERE t.id = ?
                """), arguments: [id]) else { throw LobbyError.tournamentNotFound(id) }
            if try self.entryExists(db, tournamentId: id, playerId: playerId) {
                return TournamentEntryReceipt(entry: try self.entryView(db, tournamentId: id, playerId: playerId), created: false)
            }
            guard tournament["state"] == TournamentState.open.rawValue else { throw LobbyError.tournamentClosed(id) }
            let locationName: String = tournament["name"]
            guard try self.isNear(db, playerId: playerId, locationId: tournament["locationId"], now: context.now) else {
                throw LobbyError(.forbidden, "notNearLocation", """
                    You are not at \(locationName): join its tournaments there, once your agent has seen its beacon \
                    (within the last \(Int(self.configuration.encounterWindow / 60)) minutes).
                    """)
            }
            try db.cached("INSERT INTO tournamentEntry (tournamentId, playerId, joinedAt) VALUES (?, ?, ?)")
                .execute(arguments: [id, playerId, context.now.unixTime])
            var system: any RandomNumberGenerator = SystemRandomNumberGenerator()
            for round in try self.tournamentRounds(db, tournamentId: id) {
                let signalTime = MinigameCatalog.game(named: round.minigame)?.plan(using: &system).signalTime
                try db.cached("INSERT INTO tournamentScore (tournamentId, playerId, n, signalTime) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [id, playerId, round.n, signalTime])
            }
            return TournamentEntryReceipt(entry: try self.entryView(db, tournamentId: id, playerId: playerId), created: true)
        }
    }

    /// The player's entry in a tournament.
    public func tournamentEntry(_ playerId: Int64, tournament id: Int64) async throws -> TournamentEntry {
        try await readGRDB { db, _ in
            guard try self.entryExists(db, tournamentId: id, playerId: playerId) else {
                _ = try self.tournamentSummary(db, id: id)
                throw LobbyError(.notFound, "entryNotFound", "You have not joined tournament \(id): join it first.")
            }
            return try self.entryView(db, tournamentId: id, playerId: playerId)
        }
    }

    /// Records the player's score for round `n` of its entry, verified on the recording exactly as
    /// a game's round is (``submitScore(_:game:round:score:key:recording:)``: the stored
    /// calibration, the entry's plan, ``ScoreVerifier``). The same key and score again answer as
    /// the first time; another key is refused. Scores count only until the window closes.
    public func submitTournamentScore(
        _ playerId: Int64, tournament id: Int64, round n: Int, score: Int, key: String, recording: RoundRecording
    ) async throws -> TournamentEntryReceipt {
        try Self.checkSubmission(score: score, key: key)
        try await settleTournamentsIfDue()
        let check = try await readGRDB { db, now in
            try self.checkTournamentScore(db, playerId, tournament: id, round: n, score: score, key: key, now: now)
        }
        let terms: VerificationTerms
        switch check {
        case .repeated(let entry): return TournamentEntryReceipt(entry: entry, created: false)
        case .open(let open): terms = open
        }
        let verified = try verify(score, recording, terms, of: "tournament \(id)")
        let json = String(decoding: JSONWriter.encode(verified.recording), as: UTF8.self)
        return try await write { context in
            let db = context.db.grdb
            _ = try self.settle(&context, everyLocation: false)
            if case .repeated(let entry) = try self.checkTournamentScore(db, playerId, tournament: id, round: n, score: score, key: key, now: context.now) {
                return TournamentEntryReceipt(entry: entry, created: false)
            }
            try db.cached("""
                UPDATE tournamentScore SET score = ?, key = ?, submittedAt = ?, recording = ?
                WHERE tournamentId = ? AND playerId = ? AND n = ?
                """).execute(arguments: [verified.score, key, context.now.unixTime, json, id, playerId, n])
            try db.cached("""
                UPDATE tournamentEntry SET total = total + ?, roundsPlayed = roundsPlayed + 1, lastScoredAt = ?
                WHERE tournamentId = ? AND playerId = ?
                """).execute(arguments: [verified.score, context.now.unixTime, id, playerId])
            try self.addLocationPoints(db.sql, tournament: id, player: playerId, points: verified.score)
            try self.recordEvidence(&context, player: playerId, minigame: terms.round.minigame, score: verified.score,
                                    unfingerprinted: verified.unfingerprinted)
            return TournamentEntryReceipt(entry: try self.entryView(db, tournamentId: id, playerId: playerId), created: true)
        }
    }

    // MARK: - Inside transactions

    private enum TournamentScoreCheck: Sendable {
        case repeated(TournamentEntry)
        case open(VerificationTerms)
    }

    private func checkTournamentScore(
        _ db: Database, _ playerId: Int64, tournament id: Int64, round n: Int, score: Int, key: String, now: Date
    ) throws -> TournamentScoreCheck {
        let summary = try tournamentSummary(db, id: id)
        guard let row = try Row.fetchOne(db.cached("""
            SELECT r.minigame, r.duration, s.signalTime, s.score, s.key, s.revealedAt FROM tournamentScore s
            JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
            WHERE s.tournamentId = ? AND s.playerId = ? AND s.n = ?
            """), arguments: [id, playerId, n]) else {
            if try entryExists(db, tournamentId: id, playerId: playerId) {
                throw LobbyError(.notFound, "roundNotFound", "Tournament \(id) has no round \(n).")
            }
            throw LobbyError(.forbidden, "notEntered", "You have not joined tournament \(id): join it before playing its rounds.")
        }
        if let existing: Int = row["score"] {
            guard row["key"] == key, existing == score else {
                throw LobbyError(.conflict, "scoreAlreadySubmitted",
                    "You already submitted a score for round \(n) of tournament \(id); a round is played once.")
            }
            return .repeated(try entryView(db, tournamentId: id, playerId: playerId))
        }
        guard summary.state == .open, summary.endsAt > now else { throw LobbyError.tournamentClosed(id) }
        let round = RoundRecord(gameId: id, n: n, minigame: row["minigame"], duration: row["duration"], signalTime: row["signalTime"])
        let revealedAt = (row["revealedAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        return .open(VerificationTerms(round: round, calibration: try storedCalibration(db, playerId: playerId), revealedAt: revealedAt, now: now))
    }

    /// Starts the location's tournaments for the windows that contain now, where missing; answers
    /// how many it started. Each draws its minigames once, for every entry alike.
    @discardableResult
    func scheduleTournaments(_ context: inout WriteContext, locationId: Int64) throws -> Int {
        let db = context.db.grdb
        guard let zone = try String.fetchOne(db.cached("SELECT timeZone FROM location WHERE id = ?"), arguments: [locationId]) else {
            throw LobbyError.locationNotFound(locationId)
        }
        let calendar = TournamentCalendar(identifier: zone) ?? TournamentCalendar(timeZone: .gmt)
        var created = 0
        for period in TournamentPeriod.allCases {
            let window = calendar.window(period, containing: context.now)
            try db.cached("""
                INSERT INTO tournament (locationId, period, startsAt, endsAt, state) VALUES (?, ?, ?, ?, 'open')
                ON CONFLICT (locationId, period, startsAt) DO NOTHING
                """).execute(arguments: [locationId, period.rawValue, window.start.unixTime, window.end.unixTime])
            guard db.changesCount > 0 else { continue }
            let id = db.lastInsertedRowID
            for (index, drawn) in try drawMinigames().enumerated() {
                try db.cached("INSERT INTO tournamentRound (tournamentId, n, minigame, duration) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [id, index + 1, drawn.minigame.name, drawn.plan.duration])
            }
            created += 1
        }
        return created
    }

    /// Closes every open tournament whose window has ended; answers how each ended.
    private func closeDueTournaments(_ context: inout WriteContext) throws -> [TournamentOutcome] {
        let due = try Row.fetchAll(context.db.grdb.cached("""
            SELECT id, locationId FROM tournament WHERE state = 'open' AND endsAt <= ? ORDER BY endsAt, id
            """), arguments: [context.now.unixTime])
        return try due.map { try closeTournament(&context, id: $0["id"], location: $0["locationId"]) }
    }

    /// Ranks the entries, names the winner (best total; among equal totals, whoever reached it
    /// first; an entry that played no round cannot win), gives the winner every participant's unlocked players as persistent ones, and tells
    /// every participant the outcome.
    private func closeTournament(_ context: inout WriteContext, id: Int64, location: Int64) throws -> TournamentOutcome {
        let db = context.db.grdb
        let entries = try Row.fetchAll(db.cached("""
            SELECT playerId, total, roundsPlayed FROM tournamentEntry WHERE tournamentId = ?
            ORDER BY total DESC, lastScoredAt IS NULL, lastScoredAt, joinedAt, playerId
            """), arguments: [id])
        var ranked: [TournamentOutcome.Placing] = []
        var previous: (total: Int, rank: Int)?
        for (index, row) in entries.enumerated() {
            let total: Int = row["total"]
            let rank = previous.map { $0.total == total ? $0.rank : index + 1 } ?? 1
            previous = (total, rank)
            ranked.append(TournamentOutcome.Placing(player: row["playerId"], rank: rank))
        }
        for entry in ranked {
            try db.cached(#"UPDATE tournamentEntry SET "rank" = ? WHERE tournamentId = ? AND playerId = ?"#)
                .execute(arguments: [entry.rank, id, entry.player])
        }
        let participants = ranked.map(\.player)
        let winner: Int64? = entries.first { ($0["roundsPlayed"] as Int) > 0 }?["playerId"]
        try db.cached("UPDATE tournament SET state = 'closed', closedAt = ?, winnerId = ? WHERE id = ?")
            .execute(arguments: [context.now.unixTime, winner, id])
        if let winner { try recordTournamentWin(&context, player: winner) }
        if let winner, try isFlagged(db, player: winner) {
            // Held, not lost: clearFlags(username:by:) gives them once an operator clears the winner.
            try db.cached("INSERT INTO heldReward (tournamentId, playerId, heldAt) VALUES (?, ?, ?)")
                .execute(arguments: [id, winner, context.now.unixTime])
            logger.notice("Tournament \(id) won by flagged player #\(winner): its rewards are held until an operator clears the player")
        } else {
            let before = try unlocks(db, of: participants)
            let after = RewardRule.winnerTakesUnlocks(participants: participants, winner: winner, before: before)
            try commitUnlocks(&context, owners: participants, before: before, after: after)
        }
        let winnerName = try winner.flatMap { try names(db, [$0])[$0] }
        for player in participants {
            try context.record(.tournamentFinished, for: player, EventData(winner: winnerName, tournament: id))
        }
        return TournamentOutcome(tournament: id, location: location, winner: winner, ranked: ranked)
    }

    func tournamentSummary(_ db: Database, id: Int64) throws -> TournamentSummary {
        guard let row = try Row.fetchOne(db.cached("""
            SELECT locationId, period, state, startsAt, endsAt, winnerId,
                (SELECT COUNT(*) FROM tournamentEntry WHERE tournamentId = tournament.id) AS entries
            FROM tournament WHERE id = ?
            """), arguments: [id]) else { throw LobbyError.tournamentNotFound(id) }
        let winner: Int64? = row["winnerId"]
        return TournamentSummary(
            id: id, location: row["locationId"], period: TournamentPeriod(rawValue: row["period"]) ?? .daily,
            state: TournamentState(rawValue: row["state"]) ?? .closed,
            startsAt: try row.requiredDate(atIndex: 3, "startsAt"), endsAt: try row.requiredDate(atIndex: 4, "endsAt"),
            minigames: try tournamentRounds(db, tournamentId: id).map(\.minigame), entries: row["entries"],
            winner: try winner.flatMap { try names(db, [$0])[$0] })
    }

    private func standings(_ db: Database, tournamentId id: Int64) throws -> [TournamentStanding] {
        let rows = try Row.fetchAll(db.cached(#"""
            SELECT playerId, total, roundsPlayed, "rank" FROM tournamentEntry WHERE tournamentId = ?
            ORDER BY "rank" IS NULL, "rank", total DESC, lastScoredAt IS NULL, lastScoredAt, joinedAt, playerId
            """#), arguments: [id])
        let names = try names(db, rows.map { $0["playerId"] })
        var standings: [TournamentStanding] = []
        for (index, row) in rows.enumerated() {
            let total: Int = row["total"]
            // Running tournaments rank on the fly, by the rule closing fixes.
            let rank: Int = row["rank"] ?? (standings.last.map { $0.total == total ? $0.rank : index + 1 } ?? 1)
            standings.append(TournamentStanding(rank: rank, player: names[row["playerId"]] ?? "", total: total, roundsPlayed: row["roundsPlayed"]))
        }
        return standings
    }

    private func tournamentRounds(_ db: Database, tournamentId id: Int64) throws -> [(n: Int, minigame: String, duration: Double)] {
        try Row.fetchAll(db.cached("SELECT n, minigame, duration FROM tournamentRound WHERE tournamentId = ? ORDER BY n"), arguments: [id])
            .map { ($0["n"], $0["minigame"], $0["duration"]) }
    }

    private func entryExists(_ db: Database, tournamentId: Int64, playerId: Int64) throws -> Bool {
        try Bool.fetchOne(db.cached("SELECT EXISTS (SELECT 1 FROM tournamentEntry WHERE tournamentId = ? AND playerId = ?)"),
                          arguments: [tournamentId, playerId]) ?? false
    }

    private func entryView(_ db: Database, tournamentId id: Int64, playerId: Int64) throws -> TournamentEntry {
        guard let entry = try Row.fetchOne(db.cached("""
            SELECT e.joinedAt, e.total, t.endsAt FROM tournamentEntry e JOIN tournament t ON t.id = e.tournamentId
            WHERE e.tournamentId = ? AND e.playerId = ?
            """), arguments: [id, playerId]) else { throw LobbyError(.notFound, "entryNotFound", "You have not joined tournament \(id).") }
        let rounds = try Row.fetchAll(db.cached("""
            SELECT s.n, r.minigame, r.duration, s.signalTime, s.score FROM tournamentScore s
            JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
            WHERE s.tournamentId = ? AND s.playerId = ? ORDER BY s.n
            """), arguments: [id, playerId]).map { row in
            // Quickdraw's signal is revealed when the round starts (revealTournamentSignal), not in the plan.
            TournamentEntry.Round(n: row["n"], game: row["minigame"], duration: row["duration"], signalTime: nil, score: row["score"])
        }
        return TournamentEntry(
            tournament: id, player: try names(db, [playerId])[playerId] ?? "", joinedAt: try entry.requiredDate(atIndex: 0, "joinedAt"),
            endsAt: try entry.requiredDate(atIndex: 2, "endsAt"), rounds: rounds, total: entry["total"])
    }
}

/// What one ``LobbyStore/settleTournaments()`` did.
public struct TournamentSweep: Sendable, Equatable {
    /// The tournaments it closed, and how each ended.
    public var closed: [TournamentOutcome]
    /// How many tournaments it started.
    public var created: Int
}

/// A tournament entry, and whether this request created it.
public struct TournamentEntryReceipt: Sendable {
    public var entry: TournamentEntry
    public var created: Bool
}

/// How a tournament ended, as its closing transaction stored it (player ids).
public struct TournamentOutcome: Sendable, Equatable {
    public struct Placing: Sendable, Equatable {
        public var player: Int64
        /// Standard competition ranking: ties share a rank.
        public var rank: Int
    }

    public var tournament: Int64
    public var location: Int64
    /// Nil when no entry played a round.
    public var winner: Int64?
    /// Every participant with its rank, best first.
    public var ranked: [Placing]
}

extension LobbyError {
    static func tournamentNotFound(_ id: Int64) -> LobbyError {
        LobbyError(.notFound, "tournamentNotFound", "There is no tournament \(id).")
    }

    static func tournamentClosed(_ id: Int64) -> LobbyError {
        LobbyError(.conflict, "tournamentClosed", "Tournament \(id) has closed: join one that is running (`nearplay tournaments`).")
    }
}
