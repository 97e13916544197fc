import Foundation
import GRDB
import LobbyDatabase
import Minigames

extension LobbyStore {
    /// How many local days the statistics chart covers, today included.
    public static let chartDays = 30

    /// Sets the optional profile fields; a nil field stays as it is, an empty string clears it.
    /// The zone must be an IANA name (``TimeZoneNames``) the system knows, the country two letters
    /// (stored upper case).
    public func updateSettings(_ playerId: Int64, _ changes: PlayerSettings) async throws -> PlayerSettings {
        let zone = try changes.timeZone.map { text -> String in
            guard text.isEmpty || TimeZoneNames.accepts(text) else {
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
            try context.db.execute("""
                INSERT INTO playerSettings (playerId, timeZone, country) VALUES (?, ?, ?)
                ON CONFLICT (playerId) DO UPDATE SET timeZone = excluded.timeZone, country = excluded.country
                """, playerId, settings.timeZone, settings.country)
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

    func settings(_ db: any SQLSession, playerId: Int64) throws -> PlayerSettings {
        guard let row = try db.fetchOne("SELECT timeZone, country FROM playerSettings WHERE playerId = ?", playerId) else {
            return PlayerSettings()
        }
        return PlayerSettings(timeZone: try row.get(0, as: String?.self), country: try row.get(1, as: String?.self))
    }

    /// The calendar of the player's zone (UTC when it set none, or one the system no longer knows).
    func calendar(_ db: any SQLSession, playerId: Int64) throws -> LocalCalendar {
        let zone = try db.fetchValue(String.self, "SELECT timeZone FROM playerSettings WHERE playerId = ?", playerId)
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
            var minigameWins: [MinigameName: Int] = [:]
            for (round, scores) in zip(rounds, roundScores) where GameEvaluation.roundWinner(scores) == player {
                roundsWon += 1
                minigameWins[round.minigame, default: 0] += 1
            }
            let points = PointsRule.points(roundsWon: roundsWon, outcome: outcome)
            let inserted = try db.execute("""
                INSERT INTO result (playerId, gameId, at, outcome, roundsWon, points) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """, player, gameId, now.unixTime, outcome.rawValue, roundsWon, points)
            guard inserted > 0 else { continue }
            let calendar = try calendar(db, playerId: player)
            let day = calendar.day(of: now)
            let gamesToday = try db.fetchValue(Int.self, """
                SELECT COUNT(*) FROM result WHERE playerId = ? AND at >= ? AND at < ?
                """, player, calendar.start(ofDay: day).unixTime, calendar.start(ofDay: day + 1).unixTime) ?? 0
            try db.execute("""
                INSERT INTO playerTotals (playerId, games, wins, losses, draws, roundsWon, points, bestDayGames)
                VALUES (?, 1, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (playerId) DO UPDATE SET games = playerTotals.games + 1, wins = playerTotals.wins + excluded.wins,
                    losses = playerTotals.losses + excluded.losses, draws = playerTotals.draws + excluded.draws,
                    roundsWon = playerTotals.roundsWon + excluded.roundsWon, points = playerTotals.points + excluded.points,
                    bestDayGames = CASE WHEN playerTotals.bestDayGames > excluded.bestDayGames
                                        THEN playerTotals.bestDayGames ELSE excluded.bestDayGames END
                """, player, outcome == .win ? 1 : 0, outcome == .loss ? 1 : 0, outcome == .draw ? 1 : 0, roundsWon, points, gamesToday)
            for (minigame, wins) in minigameWins {
                try db.execute("""
                    INSERT INTO minigameWins (playerId, minigame, wins) VALUES (?, ?, ?)
                    ON CONFLICT (playerId, minigame) DO UPDATE SET wins = minigameWins.wins + excluded.wins
                    """, player, minigame, wins)
            }
            var placed: [TalliedBoard] = []
            for board in [TalliedBoard.day(day), .week(ofDay: day), .month(ofDay: day), .allTime] {
                try board.add(db, player: player, points: points)
                placed.append(board)
            }
            try addLeaguePoints(db, player: player, week: LocalCalendar.week(ofDay: day), points: points)
            try grantAchievements(&context, player: player, boards: placed, gameId: gameId, round: finishingRound)
        }
    }

    /// Keeps the best single round of each minigame (the first to reach a score keeps it).
    private func recordMinigameRecords(_ db: any SQLSession, gameId: Int64, rounds: [RoundRecord], roundScores: [[Int64: Int]], at now: Date) throws {
        for (round, scores) in zip(rounds, roundScores) {
            guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { continue }
            try db.execute("""
                INSERT INTO minigameRecord (minigame, score, playerId, gameId, at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (minigame) DO UPDATE SET score = excluded.score, playerId = excluded.playerId, gameId = excluded.gameId,
                    at = excluded.at WHERE excluded.score > minigameRecord.score
                """, round.minigame, best.value, best.key, gameId, now.unixTime)
        }
    }

    /// Takes a deleted player off every board and league (its results stay, anonymous).
    func forgetStanding(_ db: any SQLSession, playerId: Int64) throws {
        let rows = try db.fetchAll("SELECT board, period, points FROM boardPoints WHERE playerId = ?", playerId)
        for row in rows {
            try TalliedBoard(board: row.get(0, as: String.self), period: row.get(1, as: Int.self))
                .remove(db, player: playerId, points: row.get(2, as: Int.self))
        }
        try db.execute("DELETE FROM league WHERE playerId = ?", playerId)
        try db.execute("DELETE FROM playerSettings WHERE playerId = ?", playerId)
    }

    /// A player's statistics, for viewers who currently see it or have unlocked it (and itself).
    public func statistics(viewer: Int64, username: String) async throws -> PlayerStatistics {
        try await read { db, now in
            try self.statistics(db, self.statisticsTarget(db, viewer: viewer, username: username, now: now), now: now)
        }
    }

    /// The player whose statistics `viewer` asks for: itself, or one it currently sees or has unlocked.
    func statisticsTarget(_ db: any SQLSession, viewer: Int64, username: String, now: Date) throws -> PlayerRecord {
        let target = try visiblePlayer(db, viewer: viewer, username: username)
        guard try canInteract(db, viewer: viewer, with: target.id!, now: now) else {
            throw LobbyError(.forbidden, .notNearby,
                "You can see the statistics only of players you currently see or have unlocked; \(username) is neither.")
        }
        return target
    }

    func statistics(_ db: any SQLSession, _ target: PlayerRecord, now: Date) throws -> PlayerStatistics {
        let playerId = target.id!
        let recent = try statistics(db, playerId: playerId, now: now)
        let calendar = try calendar(db, playerId: playerId)
        let today = calendar.day(of: now)
        let first = today - Self.chartDays + 1
        var days = (first...today).map { PlayerStatistics.Day(day: LocalCalendar.text(ofDay: $0), wins: 0, losses: 0, draws: 0) }
        let results = try db.fetchAll("""
            SELECT at, outcome FROM result WHERE playerId = ? AND at >= ? AND at < ?
            """, playerId, calendar.start(ofDay: first).unixTime, calendar.start(ofDay: today + 1).unixTime)
        for row in results {
            let index = calendar.day(of: try row.requiredDate(atIndex: 0, "at")) - first
            guard days.indices.contains(index) else { continue }
            switch GameOutcome(rawValue: try row.get(1, as: String.self)) {
            case .win: days[index].wins += 1
            case .loss: days[index].losses += 1
            case .draw: days[index].draws += 1
            case nil: break
            }
        }
        let totalsRow = try db.fetchOne("""
            SELECT games, wins, losses, draws, roundsWon, points FROM playerTotals WHERE playerId = ?
            """, playerId)
        let totals = PlayerStatistics.Totals(
            games: try totalsRow?.get(0, as: Int.self) ?? 0, wins: try totalsRow?.get(1, as: Int.self) ?? 0,
            losses: try totalsRow?.get(2, as: Int.self) ?? 0, draws: try totalsRow?.get(3, as: Int.self) ?? 0,
            roundsWon: try totalsRow?.get(4, as: Int.self) ?? 0, points: try totalsRow?.get(5, as: Int.self) ?? 0)
        let unlocked = try db.fetchValue(Int.self, "SELECT unlocked FROM unlockCount WHERE playerId = ?", playerId) ?? 0
        let tally = try db.fetchOne("""
            SELECT COALESCE(SUM(CASE WHEN unlocked > ? THEN players END), 0), COALESCE(SUM(CASE WHEN unlocked > 0 THEN players END), 0)
            FROM unlockTally
            """, unlocked)
        let records = try db.fetchAll("""
            SELECT r.minigame, r.score, r.playerId, r.at, p.username FROM minigameRecord r JOIN player p ON p.id = r.playerId ORDER BY r.minigame
            """).map { row in
            PlayerStatistics.Record(
                minigame: try row.get(0, as: MinigameName.self), score: try row.get(1, as: Int.self),
                holder: try row.get(4, as: String?.self) ?? DeletedPlayer.name(id: row.get(2, as: Int64.self)),
                at: try row.requiredDate(atIndex: 3, "at"))
        }
        let country = try db.fetchValue(String.self, """
            SELECT s.country FROM unlock u JOIN playerSettings s ON s.playerId = u.unlockedId
            WHERE u.ownerId = ? AND s.country IS NOT NULL GROUP BY s.country ORDER BY COUNT(*) DESC, s.country LIMIT 1
            """, playerId)
        return PlayerStatistics(
            username: target.username ?? "", timeZone: calendar.name, registeredAt: target.createdAt,
            spanDays: recent.spanDays, gamesPlayed: recent.gamesPlayed, gamesWon: recent.gamesWon, gamesLost: recent.gamesLost,
            gamesDrawn: recent.gamesDrawn, roundsWon: recent.roundsWon, bestScore: recent.bestScore,
            totals: totals, days: days,
            unlocked: .init(count: unlocked, rank: 1 + (try tally?.get(0, as: Int.self) ?? 0), rankedPlayers: try tally?.get(1, as: Int.self) ?? 0),
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
