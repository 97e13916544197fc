import Foundation
import GRDB
import LobbyDatabase
import Minigames

extension LobbyStore {
    /// A board must have at least this many players for a top-3 place on it to count.
    public static let podiumMinimumPlayers = 5

    /// Every achievement with the player's progress.
    public func achievements(_ playerId: Int64) async throws -> [AchievementProgress] {
        try await read { db, _ in
            _ = try self.livePlayer(db, id: playerId)
            let measures = try self.measures(db, player: playerId)
            var granted: [String: [Int: Date]] = [:]
            for row in try db.fetchAll("SELECT kind, tier, grantedAt FROM achievement WHERE playerId = ?", playerId) {
                let (kind, tier) = (try row.get(0, as: String.self), try row.get(1, as: Int.self))
                granted[kind, default: [:]][tier] = try row.requiredDate(atIndex: 2, "grantedAt")
            }
            return AchievementCatalog.all.map { kind in
                AchievementProgress(
                    achievement: kind.id, title: kind.title, measure: kind.measure, value: measures[kind.id] ?? 0,
                    tiers: kind.thresholds.enumerated().map { index, threshold in
                        .init(tier: index + 1, title: kind.title(tier: index + 1), threshold: threshold,
                              grantedAt: granted[kind.id]?[index + 1])
                    })
            }
        }
    }

    /// What each achievement counts for the player now. `podium` is 1 once it has been granted:
    /// a top-3 place is checked when it happens, not kept as a count.
    func measures(_ db: any SQLSession, player: Int64) throws -> [String: Int] {
        var measures: [String: Int] = [:]
        if let totals = try db.fetchOne("""
            SELECT games, wins, bestDayGames, tournamentsWon FROM playerTotals WHERE playerId = ?
            """, player) {
            measures[AchievementCatalog.games.id] = try totals.get(0, as: Int.self)
            measures[AchievementCatalog.firstWin.id] = try totals.get(1, as: Int.self)
            measures[AchievementCatalog.busyDay.id] = try totals.get(2, as: Int.self)
            measures[AchievementCatalog.tournamentWin.id] = try totals.get(3, as: Int.self)
        }
        for row in try db.fetchAll("SELECT minigame, wins FROM minigameWins WHERE playerId = ?", player) {
            measures[AchievementCatalog.wins(try row.get(0, as: MinigameName.self)).id] = try row.get(1, as: Int.self)
        }
        measures[AchievementCatalog.collector.id] =
            try db.fetchValue(Int.self, "SELECT unlocked FROM unlockCount WHERE playerId = ?", player) ?? 0
        measures[AchievementCatalog.podium.id] = try db.fetchValue(Int.self, """
            SELECT COUNT(*) FROM achievement WHERE playerId = ? AND kind = ?
            """, player, AchievementCatalog.podium.id) ?? 0
        return measures
    }

    /// Grants, inside a result's transaction, every tier the player has now reached and not yet
    /// been granted, and tells it (an `achievementUnlocked` event per tier). `boards` are the boards
    /// its points just went to: a top-3 place on one of at least ``podiumMinimumPlayers`` players
    /// counts for `podium`. A tier is granted once: the primary key refuses a second row, so a
    /// retried or raced request cannot grant it twice.
    func grantAchievements(_ context: inout WriteContext, player: Int64, boards: [TalliedBoard], gameId: Int64?, round: Int?) throws {
        let db = context.db
        var measures = try measures(db, player: player)
        if measures[AchievementCatalog.podium.id] == 0 {
            for board in boards {
                guard let points = try board.points(db, of: player),
                      try board.isAmongFirst(db, places: 3, points: points),
                      try board.hasAtLeast(db, Self.podiumMinimumPlayers)
                else { continue }
                measures[AchievementCatalog.podium.id] = 1
                break
            }
        }
        for kind in AchievementCatalog.all {
            guard let tiers = AchievementCatalog.tiers(of: kind, reachedBy: measures[kind.id] ?? 0) else { continue }
            for tier in tiers {
                try grant(&context, player: player, kind: kind, tier: tier, gameId: gameId, round: round)
            }
        }
    }

    private func grant(_ context: inout WriteContext, player: Int64, kind: AchievementKind, tier: Int, gameId: Int64?, round: Int?) throws {
        let inserted = try context.db.execute("""
            INSERT INTO achievement (playerId, kind, tier, grantedAt, gameId, round) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, player, kind.id, tier, context.now.unixTime, gameId, round)
        guard inserted > 0 else { return }
        try context.record(.achievementUnlocked, for: player, EventData(achievement: kind.id, tier: tier, title: kind.title(tier: tier)))
    }

    /// Counts a tournament win for the player and grants what it earns (`tournamentWin`), in the
    /// transaction that closes the tournament. Call it once per tournament won.
    func recordTournamentWin(_ context: inout WriteContext, player: Int64) throws {
        try context.db.execute("""
            INSERT INTO playerTotals (playerId, tournamentsWon) VALUES (?, 1)
            ON CONFLICT (playerId) DO UPDATE SET tournamentsWon = playerTotals.tournamentsWon + 1
            """, player)
        try grantAchievements(&context, player: player, boards: [], gameId: nil, round: nil)
    }

    /// The tiers a score submission granted its submitter: those the transaction that recorded
    /// `round` of `gameId` granted at `at`. A repeated submission answers with the same ones.
    func grants(_ db: any SQLSession, player: Int64, gameId: Int64, round: Int, at: Date) throws -> [AchievementGrant] {
        try db.fetchAll("""
            SELECT kind, tier, grantedAt FROM achievement WHERE gameId = ? AND playerId = ? AND round = ? AND grantedAt = ?
            ORDER BY kind, tier
            """, gameId, player, round, at.unixTime).compactMap { row in
            let (id, tier) = (try row.get(0, as: String.self), try row.get(1, as: Int.self))
            guard let kind = AchievementCatalog.kind(id: id) else { return nil }
            return AchievementGrant(achievement: id, tier: tier, title: kind.title(tier: tier), threshold: kind.thresholds[tier - 1],
                                    grantedAt: try row.requiredDate(atIndex: 2, "grantedAt"))
        }
    }
}
