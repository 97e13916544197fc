import Foundation
import GRDB
import LobbyDatabase
import Minigames
import SensorSamples
import SystemSupport

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
            ? try context.db.fetchAll("SELECT id FROM location ORDER BY id").map { try $0.get(0, as: Int64.self) }
            : Set(closed.map(\.location)).sorted()
        var created = 0
        for location in locations { created += try scheduleTournaments(&context, locationId: location) }
        return TournamentSweep(closed: closed, created: created)
    }

    /// ``settleTournaments()`` when a tournament's window has ended and it is still open, so that
    /// answers never show a tournament running past its end.
    func settleTournamentsIfDue() async throws {
        let due = try await read { db, now in
            try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM tournament WHERE state = \(TournamentState.open.sqlLiteral) AND endsAt <= ?)", now.unixTime) ?? false
        }
        if due { try await settleTournaments() }
    }

    /// The tournaments of a location, running ones first then the latest closed (at most 50).
    public func tournaments(location id: Int64) async throws -> [TournamentSummary] {
        try await settleTournamentsIfDue()
        return try await read { db, _ in
            guard try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM location WHERE id = ?)", id) == true else {
                throw LobbyError.locationNotFound(id)
            }
            let ids = try db.fetchAll("""
                SELECT id FROM tournament WHERE locationId = ? ORDER BY state = \(TournamentState.closed.sqlLiteral), endsAt DESC, id DESC LIMIT 50
                """, id).map { try $0.get(0, as: Int64.self) }
            return try ids.map { try self.tournamentSummary(db, id: $0) }
        }
    }

    /// One tournament with its standings.
    public func tournament(_ id: Int64) async throws -> TournamentSummary {
        try await settleTournamentsIfDue()
        return try await read { db, _ in
            var summary = try self.tournamentSummary(db, id: id)
            summary.standings = try self.standings(db, tournamentId: id)
            return summary
        }
    }

    /// A tournament's entries, best first, ranked by total (ties share a rank: 1, 2, 2, 4). Once
    /// it is closed, the ranks are the ones fixed when it closed.
    public func tournamentStandings(_ id: Int64) async throws -> [TournamentStanding] {
        try await read { db, _ in
            _ = try self.tournamentSummary(db, id: id)
            return try self.standings(db, tournamentId: id)
        }
    }

    /// How many tournaments `playerId` has won.
    public func tournamentsWon(_ playerId: Int64) async throws -> Int {
        try await read { db, _ in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM tournament WHERE winnerId = ?", playerId) ?? 0
        }
    }

    /// Enters `playerId` in a running tournament; entering again answers the entry as it is. The
    /// player must be at the tournament's location: its agent must have reported the location's
    /// beacon within ``LobbyConfiguration/encounterWindow`` (`forbidden`, `notNearLocation`
    /// otherwise). The entry's rounds are the tournament's minigames, each with a plan drawn now.
    public func joinTournament(_ playerId: Int64, tournament id: Int64) async throws -> TournamentEntryReceipt {
        try await write { context in
            _ = try self.settle(&context, everyLocation: false)
            let db = context.db
            _ = try self.livePlayer(db, id: playerId)
            // The tournament row first: a join racing the tournament's closing (another lobby
            // instance settling it) either commits before the close ranks the entries or sees it
            // closed, and two joins of one player cannot both find no entry and insert one.
            try db.lock("tournament", ids: [id])
            guard let tournament = try db.fetchOne("""
                SELECT t.locationId, t.state, l.name FROM tournament t JOIN location l ON l.id = t.locationId WHERE t.id = ?
                """, id) else { throw LobbyError.tournamentNotFound(id) }
            if try self.entryExists(db, tournamentId: id, playerId: playerId) {
                return TournamentEntryReceipt(entry: try self.entryView(db, tournamentId: id, playerId: playerId), created: false)
            }
            guard try tournament.get(1, as: String.self) == TournamentState.open.rawValue else { throw LobbyError.tournamentClosed(id) }
            let locationName = try tournament.get(2, as: String.self)
            guard try self.isNear(db, playerId: playerId, locationId: tournament.get(0, as: Int64.self), now: context.now) else {
                throw LobbyError(.forbidden, .notNearLocation, """
                    You are not at \(locationName): join its tournaments there, once your agent has seen its beacon \
                    (within the last \(Int(self.configuration.encounterWindow / 60)) minutes).
                    """)
            }
            try db.execute("INSERT INTO tournamentEntry (tournamentId, playerId, joinedAt) VALUES (?, ?, ?)", id, playerId, context.now.unixTime)
            var system: any RandomNumberGenerator = SystemRandomNumberGenerator()
            for round in try self.tournamentRounds(db, tournamentId: id) {
                let signalTime = MinigameCatalog.game(named: round.minigame)?.plan(using: &system).signalTime
                try db.execute("INSERT INTO tournamentScore (tournamentId, playerId, n, signalTime) VALUES (?, ?, ?, ?)",
                               id, playerId, round.n, signalTime)
            }
            return TournamentEntryReceipt(entry: try self.entryView(db, tournamentId: id, playerId: playerId), created: true)
        }
    }

    /// The player's entry in a tournament.
    public func tournamentEntry(_ playerId: Int64, tournament id: Int64) async throws -> TournamentEntry {
        try await read { db, _ in
            guard try self.entryExists(db, tournamentId: id, playerId: playerId) else {
                _ = try self.tournamentSummary(db, id: id)
                throw LobbyError(.notFound, .entryNotFound, "You have not joined tournament \(id): join it first.")
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
        let check = try await read { db, now in
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
            let db = context.db
            _ = try self.settle(&context, everyLocation: false)
            // The tournament row first: a score racing the tournament's closing (another lobby
            // instance settling it) either counts before the close ranks the entries or finds it
            // closed, and the same round submitted twice at once is checked once the first committed.
            try db.lock("tournament", ids: [id])
            if case .repeated(let entry) = try self.checkTournamentScore(db, playerId, tournament: id, round: n, score: score, key: key, now: context.now) {
                return TournamentEntryReceipt(entry: entry, created: false)
            }
            let stored = try db.execute("""
                UPDATE tournamentScore SET score = ?, key = ?, submittedAt = ?, recording = ?
                WHERE tournamentId = ? AND playerId = ? AND n = ? AND score IS NULL
                """, verified.score, key, context.now.unixTime, json, id, playerId, n)
            guard stored == 1 else {
                throw LobbyError(.conflict, .scoreAlreadySubmitted,
                    "You already submitted a score for round \(n) of tournament \(id); a round is played once.")
            }
            try db.execute("""
                UPDATE tournamentEntry SET total = total + ?, roundsPlayed = roundsPlayed + 1, lastScoredAt = ?
                WHERE tournamentId = ? AND playerId = ?
                """, verified.score, context.now.unixTime, id, playerId)
            try self.addLocationPoints(db, tournament: id, player: playerId, points: verified.score)
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
        _ db: any SQLSession, _ playerId: Int64, tournament id: Int64, round n: Int, score: Int, key: String, now: Date
    ) throws -> TournamentScoreCheck {
        let summary = try tournamentSummary(db, id: id)
        guard let row = try db.fetchOne("""
            SELECT r.minigame, r.duration, s.signalTime, s.score, s.key, s.revealedAt FROM tournamentScore s
            JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
            WHERE s.tournamentId = ? AND s.playerId = ? AND s.n = ?
            """, id, playerId, n) else {
            if try entryExists(db, tournamentId: id, playerId: playerId) {
                throw LobbyError(.notFound, .roundNotFound, "Tournament \(id) has no round \(n).")
            }
            throw LobbyError(.forbidden, .notEntered, "You have not joined tournament \(id): join it before playing its rounds.")
        }
        if let existing = try row.get(3, as: Int?.self) {
            guard try row.get(4, as: String?.self) == key, existing == score else {
                throw LobbyError(.conflict, .scoreAlreadySubmitted,
                    "You already submitted a score for round \(n) of tournament \(id); a round is played once.")
            }
            return .repeated(try entryView(db, tournamentId: id, playerId: playerId))
        }
        guard summary.state == .open, summary.endsAt > now else { throw LobbyError.tournamentClosed(id) }
        let round = RoundRecord(gameId: id, n: n, minigame: try row.get(0, as: MinigameName.self), duration: try row.get(1, as: Double.self),
                                signalTime: try row.get(2, as: Double?.self))
        let revealedAt = try row.date(atIndex: 5)
        return .open(VerificationTerms(round: round, calibration: try storedCalibration(db, playerId: playerId),
                                       revealedAt: revealedAt, now: now))
    }

    /// Starts the location's tournaments for the windows that contain now, where missing; answers
    /// how many it started. Each draws its minigames once, for every entry alike.
    @discardableResult
    func scheduleTournaments(_ context: inout WriteContext, locationId: Int64) throws -> Int {
        let db = context.db
        guard let zone = try db.fetchValue(String.self, "SELECT timeZone FROM location WHERE id = ?", locationId) else {
            throw LobbyError.locationNotFound(locationId)
        }
        let calendar = TournamentCalendar(identifier: zone) ?? TournamentCalendar(timeZone: .gmt)
        var created = 0
        for period in TournamentPeriod.allCases {
            let window = calendar.window(period, containing: context.now)
            // No row back when the window's tournament exists (or another instance is creating
            // it: PostgreSQL waits for that one's commit, then does nothing).
            guard let id = try db.fetchValue(Int64.self, """
                INSERT INTO tournament (locationId, period, startsAt, endsAt, state) VALUES (?, ?, ?, ?, \(TournamentState.open.sqlLiteral))
                ON CONFLICT (locationId, period, startsAt) DO NOTHING RETURNING id
                """, locationId, period.rawValue, window.start.unixTime, window.end.unixTime)
            else { continue }
            for (index, drawn) in try drawMinigames().enumerated() {
                try db.execute("INSERT INTO tournamentRound (tournamentId, n, minigame, duration) VALUES (?, ?, ?, ?)",
                               id, index + 1, drawn.minigame.name, drawn.plan.duration)
            }
            created += 1
        }
        return created
    }

    /// Closes every open tournament whose window has ended; answers how each ended.
    private func closeDueTournaments(_ context: inout WriteContext) throws -> [TournamentOutcome] {
        let due = try context.db.fetchAll("""
            SELECT id, locationId FROM tournament WHERE state = \(TournamentState.open.sqlLiteral) AND endsAt <= ? ORDER BY endsAt, id
            """, context.now.unixTime)
        var closed: [TournamentOutcome] = []
        for row in due {
            if let outcome = try closeTournament(&context, id: row.get(0, as: Int64.self), location: row.get(1, as: Int64.self)) {
                closed.append(outcome)
            }
        }
        return closed
    }

    /// Ranks the entries, names the winner (best total; among equal totals, whoever reached it
    /// first; an entry that played no round cannot win), gives the winner every participant's unlocked players as persistent ones, and tells
    /// every participant the outcome. Nil when the tournament is no longer open: another
    /// transaction (another lobby instance on the same PostgreSQL database) closed it first.
    private func closeTournament(_ context: inout WriteContext, id: Int64, location: Int64) throws -> TournamentOutcome? {
        let db = context.db
        // Settled exactly once: two instances settling at the same moment both list it as due;
        // the second waits here for the first's commit, then finds it closed (the conditional
        // UPDATE below changes nothing) and leaves it. The lock also holds joins and scores back
        // (they lock it too) while the entries are ranked.
        try db.lock("tournament", ids: [id])
        let entries = try db.fetchAll("""
            SELECT playerId, total, roundsPlayed FROM tournamentEntry WHERE tournamentId = ?
            ORDER BY total DESC, lastScoredAt IS NULL, lastScoredAt, joinedAt, playerId
            """, id)
        var ranked: [TournamentOutcome.Placing] = []
        var previous: (total: Int, rank: Int)?
        var winner: Int64?
        for (index, row) in entries.enumerated() {
            let (player, total) = (try row.get(0, as: Int64.self), try row.get(1, as: Int.self))
            let rank = previous.map { $0.total == total ? $0.rank : index + 1 } ?? 1
            previous = (total, rank)
            ranked.append(TournamentOutcome.Placing(player: player, rank: rank))
            if winner == nil, try row.get(2, as: Int.self) > 0 { winner = player }
        }
        let closing = try db.execute("UPDATE tournament SET state = \(TournamentState.closed.sqlLiteral), closedAt = ?, winnerId = ? WHERE id = ? AND state = \(TournamentState.open.sqlLiteral)",
                                     context.now.unixTime, winner, id)
        guard closing == 1 else { return nil }
        for entry in ranked {
            try db.execute(#"UPDATE tournamentEntry SET "rank" = ? WHERE tournamentId = ? AND playerId = ?"#, entry.rank, id, entry.player)
        }
        let participants = ranked.map(\.player)
        if let winner { try recordTournamentWin(&context, player: winner) }
        if let winner, try isFlagged(db, player: winner) {
            // Held, not lost: clearFlags(username:by:) gives them once an operator clears the winner.
            try db.execute("INSERT INTO heldReward (tournamentId, playerId, heldAt) VALUES (?, ?, ?)", id, winner, context.now.unixTime)
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

    func tournamentSummary(_ db: any SQLSession, id: Int64) throws -> TournamentSummary {
        guard let row = try db.fetchOne("""
            SELECT locationId, period, state, startsAt, endsAt, winnerId,
                (SELECT COUNT(*) FROM tournamentEntry WHERE tournamentId = tournament.id) AS entries
            FROM tournament WHERE id = ?
            """, id) else { throw LobbyError.tournamentNotFound(id) }
        let winner = try row.get(5, as: Int64?.self)
        return TournamentSummary(
            id: id, location: try row.get(0, as: Int64.self), period: TournamentPeriod(rawValue: try row.get(1, as: String.self)) ?? .daily,
            state: TournamentState(rawValue: try row.get(2, as: String.self)) ?? .closed,
            startsAt: try row.requiredDate(atIndex: 3, "startsAt"), endsAt: try row.requiredDate(atIndex: 4, "endsAt"),
            minigames: try tournamentRounds(db, tournamentId: id).map(\.minigame), entries: try row.get(6, as: Int.self),
            winner: try winner.flatMap { try names(db, [$0])[$0] })
    }

    func standings(_ db: any SQLSession, tournamentId id: Int64) throws -> [TournamentStanding] {
        let rows = try db.fetchAll(#"""
            SELECT playerId, total, roundsPlayed, "rank" FROM tournamentEntry WHERE tournamentId = ?
            ORDER BY "rank" IS NULL, "rank", total DESC, lastScoredAt IS NULL, lastScoredAt, joinedAt, playerId
            """#, id)
        let names = try names(db, rows.map { try $0.get(0, as: Int64.self) })
        var standings: [TournamentStanding] = []
        for (index, row) in rows.enumerated() {
            let total = try row.get(1, as: Int.self)
            // Running tournaments rank on the fly, by the rule closing fixes.
            let rank = try row.get(3, as: Int?.self) ?? (standings.last.map { $0.total == total ? $0.rank : index + 1 } ?? 1)
            standings.append(TournamentStanding(rank: rank, player: names[try row.get(0, as: Int64.self)] ?? "", total: total,
                                                roundsPlayed: try row.get(2, as: Int.self)))
        }
        return standings
    }

    private func tournamentRounds(_ db: any SQLSession, tournamentId id: Int64) throws -> [(n: Int, minigame: MinigameName, duration: Double)] {
        try db.fetchAll("SELECT n, minigame, duration FROM tournamentRound WHERE tournamentId = ? ORDER BY n", id)
            .map { (try $0.get(0, as: Int.self), try $0.get(1, as: MinigameName.self), try $0.get(2, as: Double.self)) }
    }

    private func entryExists(_ db: any SQLSession, tournamentId: Int64, playerId: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM tournamentEntry WHERE tournamentId = ? AND playerId = ?)",
                          tournamentId, playerId) ?? false
    }

    private func entryView(_ db: any SQLSession, tournamentId id: Int64, playerId: Int64) throws -> TournamentEntry {
        guard let entry = try db.fetchOne("""
            SELECT e.joinedAt, e.total, t.endsAt FROM tournamentEntry e JOIN tournament t ON t.id = e.tournamentId
            WHERE e.tournamentId = ? AND e.playerId = ?
            """, id, playerId) else { throw LobbyError(.notFound, .entryNotFound, "You have not joined tournament \(id).") }
        let rounds = try db.fetchAll("""
            SELECT s.n, r.minigame, r.duration, s.signalTime, s.score FROM tournamentScore s
            JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
            WHERE s.tournamentId = ? AND s.playerId = ? ORDER BY s.n
            """, id, playerId).map { row in
            // Quickdraw's signal is revealed when the round starts (revealTournamentSignal), not in the plan.
            TournamentEntry.Round(n: try row.get(0, as: Int.self), game: try row.get(1, as: MinigameName.self), duration: try row.get(2, as: Double.self),
                                  signalTime: nil, score: try row.get(4, as: Int?.self))
        }
        return TournamentEntry(
            tournament: id, player: try names(db, [playerId])[playerId] ?? "", joinedAt: try entry.requiredDate(atIndex: 0, "joinedAt"),
            endsAt: try entry.requiredDate(atIndex: 2, "endsAt"), rounds: rounds, total: try entry.get(1, as: Int.self))
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
        LobbyError(.notFound, .tournamentNotFound, "There is no tournament \(id).")
    }

    static func tournamentClosed(_ id: Int64) -> LobbyError {
        LobbyError(.conflict, .tournamentClosed, "Tournament \(id) has closed: join one that is running (`nearplay tournaments`).")
    }
}
