import Foundation
import GRDB

extension LobbyStore {
    /// How many local days the statistics chart covers, today included.
    public static let chartDays = 30

    /// Sets the optional profile fields; a nil field stays as it is, an empty string clears it.
    /// The zone must be an IANA name the system knows, the country two letters (stored upper case).
    public func updateSettings(_ playerId: Int64, _ changes: PlayerSettings) async throws -> PlayerSettings {
        let zone = try changes.timeZone.map { text -> String in
            guard text.isEmpty || LocalCalendar(identifier: text) != nil, text.count <= 64 else {
                throw LobbyError.invalid("timeZone", "\"\(text.prefix(64))\" is not an IANA time zone such as Europe/Oslo or America/New_York.")
            }
            return text
        }
        let country = try changes.country.map { text -> String in
            guard text.isEmpty || (text.count == 2 && text.allSatisfy { $0.isASCII && $0.isLetter }) else {
                throw LobbyError.invalid("country", "\"\(text.prefix(16))\" is not a two-letter ISO 3166-1 country code such as NO or DE.")
            }
            return text.uppercased()
        }
        return try await write { context in
            _ = try self.livePlayer(context.db, id: playerId)
            var settings = try self.settings(context.db, playerId: playerId)
            if let zone { settings.timeZone = zone.isEmpty ? nil : zone }
            if let country { settings.country = country.isEmpty ? nil : country }
            try context.db.execute(sql: """
                INSERT INTO playerSettings (playerId, timeZone, country) VALUES (?, ?, ?)
                ON CONFLICT (playerId) DO UPDATE SET timeZone = excluded.timeZone, country = excluded.country
                """, arguments: [playerId, settings.timeZone, settings.country])
            return settings
        }
    }

    /// The player's optional profile fields.
    public func settings(_ playerId: Int64) async throws -> PlayerSettings {
        try await read { db, _ in
            _ = try self.livePlayer(db, id: playerId)
            return try self.settings(db, playerId: playerId)
        }
    }

    func settings(_ db: Database, playerId: Int64) throws -> PlayerSettings {
        guard let row = try Row.fetchOne(db.cached("SELECT timeZone, country FROM playerSettings WHERE playerId = ?"), arguments: [playerId]) else {
            return PlayerSettings()
        }
        return PlayerSettings(timeZone: row[0], country: row[1])
    }

    /// The calendar of the player's zone (UTC when it set none, or one the system no longer knows).
    func calendar(_ db: Database, playerId: Int64) throws -> LocalCalendar {
        let zone = try String.fetchOne(db.cached("SELECT timeZone FROM playerSettings WHERE playerId = ?"), arguments: [playerId])
        return zone.flatMap(LocalCalendar.named) ?? .utc
    }

    /// Records a finished game's results, in the transaction that finished it: each live
    /// participant's result row, totals, minigame wins, points on the boards of its current day,
    /// week and month (in its zone) and all time, its league, then the achievements this earned.
    /// Deleted participants get nothing. `round` is the round whose score finished the game, when a
    /// score did (achievements remember it, so a repeated submission answers with the same ones).
    func recordResults(
        _ context: inout WriteContext, gameId: Int64, participants: [Int64], rounds: [RoundRecord],
        roundScores: [[Int64: Int]], winner: Int64?, round finishingRound: Int?
    ) throws {
        let db = context.db
        let now = context.now
        try recordMinigameRecords(db, gameId: gameId, rounds: rounds, roundScores: roundScores, at: now)
        for player in participants {
            guard let record = try Query.player(db, id: player), record.deletedAt == nil else { continue }
            let outcome = GameOutcome(player: player, winner: winner)
            var roundsWon = 0
            var minigameWins: [String: Int] = [:]
            for (round, scores) in zip(rounds, roundScores) where GameEvaluation.roundWinner(scores) == player {
                roundsWon += 1
                minigameWins[round.minigame, default: 0] += 1
            }
            let points = PointsRule.points(roundsWon: roundsWon, outcome: outcome)
            try db.cached("""
                INSERT INTO result (playerId, gameId, at, outcome, roundsWon, points) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """).execute(arguments: [player, gameId, now.unixTime, outcome.rawValue, roundsWon, points])
            guard db.changesCount > 0 else { continue }
            let calendar = try calendar(db, playerId: player)
            let day = calendar.day(of: now)
            let gamesToday = try Int.fetchOne(db.cached("""
                SELECT COUNT(*) FROM result WHERE playerId = ? AND at >= ? AND at < ?
                """), arguments: [player, calendar.start(ofDay: day).unixTime, calendar.start(ofDay: day + 1).unixTime]) ?? 0
            try db.cached("""
                INSERT INTO playerTotals (playerId, games, wins, losses, draws, roundsWon, points, bestDayGames)
                VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (playerId) DO UPDATE SET games = games + 1, wins = wins + ?2, losses = losses + ?3,
                    draws = draws + ?4, roundsWon = roundsWon + ?5, points = points + ?6, bestDayGames = max(bestDayGames, ?7)
                """).execute(arguments: [
                    player, outcome == .win ? 1 : 0, outcome == .loss ? 1 : 0, outcome == .draw ? 1 : 0, roundsWon, points, gamesToday,
                ])
            for (minigame, wins) in minigameWins {
                try db.cached("""
                    INSERT INTO minigameWins (playerId, minigame, wins) VALUES (?1, ?2, ?3)
                    ON CONFLICT (playerId, minigame) DO UPDATE SET wins = wins + ?3
                    """).execute(arguments: [player, minigame, wins])
            }
            var placed: [TalliedBoard] = []
            for board in [TalliedBoard.day(day), .week(ofDay: day), .month(ofDay: day), .allTime] {
                try board.add(db.sql, player: player, points: points)
                placed.append(board)
            }
            try addLeaguePoints(db.sql, player: player, week: LocalCalendar.week(ofDay: day), points: points)
            try grantAchievements(&context, player: player, boards: placed, gameId: gameId, round: finishingRound)
        }
    }

    /// Keeps the best single round of each minigame (the first to reach a score keeps it).
    private func recordMinigameRecords(_ db: Database, gameId: Int64, rounds: [RoundRecord], roundScores: [[Int64: Int]], at now: Date) throws {
        for (round, scores) in zip(rounds, roundScores) {
            guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { continue }
            try db.cached("""
                INSERT INTO minigameRecord (minigame, score, playerId, gameId, at) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (minigame) DO UPDATE SET score = ?2, playerId = ?3, gameId = ?4, at = ?5 WHERE ?2 > minigameRecord.score
                """).execute(arguments: [round.minigame, best.value, best.key, gameId, now.unixTime])
        }
    }

    /// Takes a deleted player off every board and league (its results stay, anonymous).
    func forgetStanding(_ db: Database, playerId: Int64) throws {
        let rows = try Row.fetchAll(db.cached("SELECT board, period, points FROM boardPoints WHERE playerId = ?"), arguments: [playerId])
        for row in rows {
            try TalliedBoard(board: row[0], period: row[1]).remove(db.sql, player: playerId, points: row[2])
        }
        try db.execute(sql: """
            DELETE FROM league WHERE playerId = :id;
            DELETE FROM playerSettings WHERE playerId = :id;
            """, arguments: ["id": playerId])
    }

    /// A player's statistics, for viewers who currently see it or have unlocked it (and itself).
    public func statistics(viewer: Int64, username: String) async throws -> PlayerStatistics {
        try await read { db, now in
            try self.statistics(db, self.statisticsTarget(db, viewer: viewer, username: username, now: now), now: now)
        }
    }

    /// The player whose statistics `viewer` asks for: itself, or one it currently sees or has unlocked.
    func statisticsTarget(_ db: Database, viewer: Int64, username: String, now: Date) throws -> PlayerRecord {
        let target = try visiblePlayer(db, viewer: viewer, username: username)
        guard try canInteract(db, viewer: viewer, with: target.id!, now: now) else {
            throw LobbyError(.forbidden, "notNearby",
                "You can see the statistics only of players you currently see or have unlocked; \(username) is neither.")
        }
        return target
    }

    func statistics(_ db: Database, _ target: PlayerRecord, now: Date) throws -> PlayerStatistics {
        let playerId = target.id!
        let recent = try statistics(db, playerId: playerId, now: now)
        let calendar = try calendar(db, playerId: playerId)
        let today = calendar.day(of: now)
        let first = today - Self.chartDays + 1
        var days = (first...today).map { PlayerStatistics.Day(day: LocalCalendar.text(ofDay: $0), wins: 0, losses: 0, draws: 0) }
        let results = try Row.fetchCursor(db.cached("""
            SELECT at, outcome FROM result WHERE playerId = ? AND at >= ? AND at < ?
            """), arguments: [playerId, calendar.start(ofDay: first).unixTime, calendar.start(ofDay: today + 1).unixTime])
        while let row = try results.next() {
            let index = calendar.day(of: Date(timeIntervalSince1970: row[0])) - first
            guard days.indices.contains(index) else { continue }
            switch GameOutcome(rawValue: row[1]) {
            case .win: days[index].wins += 1
            case .loss: days[index].losses += 1
            case .draw: days[index].draws += 1
            case nil: break
            }
        }
        let totalsRow = try Row.fetchOne(db.cached("""
            SELECT games, wins, losses, draws, roundsWon, points FROM playerTotals WHERE playerId = ?
            """), arguments: [playerId])
        let totals = PlayerStatistics.Totals(
            games: totalsRow?[0] ?? 0, wins: totalsRow?[1] ?? 0, losses: totalsRow?[2] ?? 0, draws: totalsRow?[3] ?? 0,
            roundsWon: totalsRow?[4] ?? 0, points: totalsRow?[5] ?? 0)
        let unlocked = try Int.fetchOne(db.cached("SELECT unlocked FROM unlockCount WHERE playerId = ?"), arguments: [playerId]) ?? 0
        let tally = try Row.fetchOne(db.cached("""
            SELECT COALESCE(SUM(CASE WHEN unlocked > ?1 THEN players END), 0), COALESCE(SUM(CASE WHEN unlocked > 0 THEN players END), 0)
            FROM unlockTally
            """), arguments: [unlocked])
        let records = try Row.fetchAll(db.cached("""
            SELECT r.minigame, r.score, r.playerId, r.at, p.username FROM minigameRecord r JOIN player p ON p.id = r.playerId ORDER BY r.minigame
            """)).map { row in
            PlayerStatistics.Record(
                minigame: row[0], score: row[1], holder: (row[4] as String?) ?? DeletedPlayer.name(id: row[2]),
                at: Date(timeIntervalSince1970: row[3]))
        }
        let country = try String.fetchOne(db.cached("""
            SELECT s.country FROM unlock u JOIN playerSettings s ON s.playerId = u.unlockedId
            WHERE u.ownerId = ? AND s.country IS NOT NULL GROUP BY s.country ORDER BY COUNT(*) DESC, s.country LIMIT 1
            """), arguments: [playerId])
        return PlayerStatistics(
            username: target.username ?? "", timeZone: calendar.name, registeredAt: target.createdAt,
            spanDays: recent.spanDays, gamesPlayed: recent.gamesPlayed, gamesWon: recent.gamesWon, gamesLost: recent.gamesLost,
            gamesDrawn: recent.gamesDrawn, roundsWon: recent.roundsWon, bestScore: recent.bestScore,
            totals: totals, days: days,
            unlocked: .init(count: unlocked, rank: 1 + (tally?[0] ?? 0), rankedPlayers: tally?[1] ?? 0),
            records: records, topOpponentCountry: country)
    }
}

extension LobbyStore {
    /// The player's own view of itself with its optional profile fields.
    public func playerWithSettings(_ playerId: Int64) async throws -> Player {
        try await read { db, _ in
            var player = try self.playerView(self.livePlayer(db, id: playerId))
            let settings = try self.settings(db, playerId: playerId)
            player.timeZone = settings.timeZone
            player.country = settings.country
            return player
        }
    }
}
