import BeaconKeys
import struct BeaconFrames.SplitMix64
import Foundation
import LobbyDatabase
import HummingbirdBcrypt
import Minigames

/// Fills a store with a past: players up to a given number and finished one-round Statue games
/// between random pairs over the last days, with everything a result leaves behind (results,
/// totals, minigame wins and records, board points and tallies, leagues, unlocks, achievements),
/// for the statistics benchmark and the lobby load test at scale.
///
/// It writes in bulk rather than through ``LobbyStore/recordResults``, one game at a time, but with
/// the same rules (``PointsRule``, ``LocalCalendar``, ``AchievementCatalog``), so what it leaves is
/// what playing those games would have left, but for two simplifications: league tiers are spread
/// over the five tiers by player id rather than earned week by week, and no `podium` is granted.
/// Seeded from `seed`: the same arguments give the same history.
public struct HistorySeeder: Sendable {
    public struct Summary: Sendable {
        public var players: Int
        public var games: Int
        public var results: Int
    }

    /// The zones and countries seeded players get, in turn (nil: none set).
    static let zones: [String?] = ["Europe/Oslo", "America/New_York", nil, "Asia/Tokyo", "America/Los_Angeles", "Australia/Sydney", "UTC"]
    static let countries: [String?] = ["NO", "US", nil, "JP", "US", "AU", "DE", "BR"]

    /// The minigame of every seeded game's one round.
    static let minigame = MinigameName.statue

    let store: LobbyStore

    public init(store: LobbyStore) { self.store = store }

    /// Adds players until there are `players`, then `results / 2` games (two results each) finished
    /// at random times in the `days` days before now.
    public func seed(players: Int, results: Int, days: Int = 90, seed: UInt64 = 1) async throws -> Summary {
        let hash = Bcrypt.hash("seeded-password", cost: 4)
        let calendars = Self.zones.map { $0.flatMap(LocalCalendar.init(identifier:)) ?? .utc }
        return try await store.write { context in
            let db = context.db
            let now = context.now
            var random = SplitMix64(seed: seed)
            // Millions of rows land at random places in their B-trees: keep them in memory meanwhile.
            // A SQLite connection's setting; PostgreSQL sizes its cache for the server (shared_buffers).
            if db.dialect == .sqlite {
                try db.execute("PRAGMA cache_size = -262144")
            }
            defer { if db.dialect == .sqlite { _ = try? db.execute("PRAGMA cache_size = -2000") } }
            let existing = try db.fetchValue(Int.self, "SELECT COUNT(*) FROM player") ?? 0
            let highest = try db.fetchValue(Int.self, "SELECT MAX(beaconMajor * 65536 + beaconMinor) FROM player") ?? 65535
            // Each statement below is prepared once (SQLite's session caches it by its text) and run
            // many times.
            let insertPlayer = """
                INSERT INTO player (username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, photoVersion, createdAt, beaconSecret)
                VALUES (?, 'History', ?, ?, ?, ?, ?, 0, ?, ?)
                """
            let insertSettings = "INSERT INTO playerSettings (playerId, timeZone, country) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
            for i in existing..<max(existing, players) {
                let beacon = highest + 1 + i - existing
                try db.execute(insertPlayer,
                    "hist\(i)", "Player \(i)", "hist\(i)@example.org", hash, beacon / 65536, beacon % 65536,
                    now.addingTimeInterval(-Double(days + 1) * 86400).unixTime, Data(BeaconSecret.random().bytes))
            }
            let ids = try db.fetchAll("SELECT id FROM player WHERE deletedAt IS NULL ORDER BY id").map { try $0.get(0, as: Int64.self) }
            guard ids.count >= 2 else { return Summary(players: ids.count, games: 0, results: 0) }
            var zoneOf: [Int64: Int] = [:]
            for (index, id) in ids.enumerated() {
                let zone = index % Self.zones.count
                zoneOf[id] = zone
                try db.execute(insertSettings, id, Self.zones[zone], Self.countries[index % Self.countries.count])
            }

            let insertGame = """
                INSERT INTO game (inviterId, state, createdAt, expiresAt, openedAt, finishedAt, winnerId) VALUES (?, \(GameState.finished.sqlLiteral), ?, ?, ?, ?, ?)
                RETURNING id
                """
            let insertMember = """
                INSERT INTO membership (gameId, playerId, role, response, respondedAt) VALUES (?, ?, ?, \(InvitationResponse.accepted.sqlLiteral), ?)
                """
            let insertRound = "INSERT INTO round (gameId, n, minigame, duration) VALUES (?, 1, ?, 10)"
            let insertScore = """
                INSERT INTO score (gameId, n, playerId, score, key, submittedAt) VALUES (?, 1, ?, ?, ?, ?)
                """
            let insertResult = """
                INSERT INTO result (playerId, gameId, at, outcome, roundsWon, points) VALUES (?, ?, ?, ?, ?, ?)
                """
            let insertUnlock = """
                INSERT INTO unlock (ownerId, unlockedId, persistent, since) VALUES (?, ?, 1, ?)
                ON CONFLICT (ownerId, unlockedId) DO UPDATE SET persistent = 1
                """

            struct Totals { var games = 0, wins = 0, losses = 0, draws = 0, roundsWon = 0, points = 0, bestDay = 0 }
            struct BoardKey: Hashable { var board: UInt8; var period: Int; var player: Int64 }
            var totals: [Int64: Totals] = [:]
            var boards: [BoardKey: Int] = [:]
            var leagues: [BoardKey: Int] = [:]
            var gamesPerDay: [BoardKey: Int] = [:]
            var record: (score: Int, player: Int64, game: Int64, at: Double)?
            let games = results / 2
            for _ in 0..<games {
                let first = Int(random.next() % UInt64(ids.count))
                var second = Int(random.next() % UInt64(ids.count - 1))
                if second >= first { second += 1 }
                let (a, b) = (ids[first], ids[second])
                let at = now.addingTimeInterval(-Double(random.next() % UInt64(days * 86400)) - 1)
                let scores = (Int(random.next() % 1001), Int(random.next() % 1001))
                let winner: Int64? = scores.0 > scores.1 ? a : scores.1 > scores.0 ? b : nil
                guard let game = try db.fetchValue(Int64.self, insertGame, a, at.unixTime - 120, at.unixTime, at.unixTime - 60, at.unixTime, winner)
                else { throw SQLError.connection("the database inserted a game without answering its id") }
                try db.execute(insertMember, game, a, "inviter", at.unixTime - 60)
                try db.execute(insertMember, game, b, "invitee", at.unixTime - 60)
                try db.execute(insertRound, game, Self.minigame)
                for (player, score) in [(a, scores.0), (b, scores.1)] {
                    try db.execute(insertScore, game, player, score, "history-\(game)-\(player)", at.unixTime)
                    if score > (record?.score ?? -1) { record = (score, player, game, at.unixTime) }
                    let outcome = GameOutcome(player: player, winner: winner)
                    let roundsWon = outcome == .win ? 1 : 0
                    let points = PointsRule.points(roundsWon: roundsWon, outcome: outcome)
                    try db.execute(insertResult, player, game, at.unixTime, outcome.rawValue, roundsWon, points)
                    let day = calendars[zoneOf[player] ?? 0].day(of: at)
                    var total = totals[player, default: Totals()]
                    total.games += 1
                    total.roundsWon += roundsWon
                    total.points += points
                    switch outcome {
                    case .win: total.wins += 1
                    case .loss: total.losses += 1
                    case .draw: total.draws += 1
                    }
                    let today = BoardKey(board: 0, period: day, player: player)
                    gamesPerDay[today, default: 0] += 1
                    total.bestDay = max(total.bestDay, gamesPerDay[today]!)
                    totals[player] = total
                    boards[BoardKey(board: 0, period: day, player: player), default: 0] += points
                    boards[BoardKey(board: 1, period: LocalCalendar.week(ofDay: day), player: player), default: 0] += points
                    boards[BoardKey(board: 2, period: LocalCalendar.month(ofDay: day), player: player), default: 0] += points
                    boards[BoardKey(board: 3, period: 0, player: player), default: 0] += points
                    leagues[BoardKey(board: 0, period: LocalCalendar.week(ofDay: day), player: player), default: 0] += points
                }
                try db.execute(insertUnlock, a, b, at.unixTime)
                try db.execute(insertUnlock, b, a, at.unixTime)
            }

            let insertTotals = """
                INSERT INTO playerTotals (playerId, games, wins, losses, draws, roundsWon, points, bestDayGames) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
            let insertWins = "INSERT INTO minigameWins (playerId, minigame, wins) VALUES (?, ?, ?)"
            let insertGrant = """
                INSERT INTO achievement (playerId, kind, tier, grantedAt) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING
                """
            for (player, total) in totals {
                try db.execute(insertTotals,
                    player, total.games, total.wins, total.losses, total.draws, total.roundsWon, total.points, total.bestDay)
                if total.roundsWon > 0 { try db.execute(insertWins, player, Self.minigame, total.roundsWon) }
                let measures = [
                    AchievementCatalog.firstWin: total.wins, AchievementCatalog.games: total.games,
                    AchievementCatalog.wins(Self.minigame): total.roundsWon, AchievementCatalog.busyDay: total.bestDay,
                ]
                for (kind, value) in measures {
                    guard let tiers = AchievementCatalog.tiers(of: kind, reachedBy: value) else { continue }
                    for tier in tiers { try db.execute(insertGrant, player, kind.id, tier, now.unixTime) }
                }
            }
            let collectors = try db.fetchAll("SELECT playerId, unlocked FROM unlockCount")
            for row in collectors {
                guard let tiers = AchievementCatalog.tiers(of: AchievementCatalog.collector, reachedBy: try row.get(1, as: Int.self)) else { continue }
                let player = try row.get(0, as: Int64.self)
                for tier in tiers { try db.execute(insertGrant, player, AchievementCatalog.collector.id, tier, now.unixTime) }
            }
            let boardNames = ["day", "week", "month", "all"]
            let insertPoints = "INSERT INTO boardPoints (board, period, playerId, points) VALUES (?, ?, ?, ?)"
            let sorted = boards.sorted { ($0.key.board, $0.key.period, $0.key.player) < ($1.key.board, $1.key.period, $1.key.player) }
            for (key, points) in sorted {
                try db.execute(insertPoints, boardNames[Int(key.board)], key.period, key.player, points)
            }
            try db.execute("""
                INSERT INTO boardTally (board, period, points, players)
                SELECT board, period, points, COUNT(*) FROM boardPoints GROUP BY board, period, points
                """)
            // Leagues: tiers by player id; groups of LeagueRule.groupSize in id order within each week and tier.
            var members: [Int: [Int: [(Int64, Int)]]] = [:]
            for (key, points) in leagues {
                members[key.period, default: [:]][Int(key.player % 5) + 1, default: []].append((key.player, points))
            }
            let insertLeague = """
                INSERT INTO league (week, playerId, tier, groupNumber, points) VALUES (?, ?, ?, ?, ?)
                """
            for (week, tiers) in members {
                for (tier, players) in tiers {
                    for (index, member) in players.sorted(by: { $0.0 < $1.0 }).enumerated() {
                        try db.execute(insertLeague, week, member.0, tier, index / LeagueRule.groupSize + 1, member.1)
                    }
                }
            }
            if let record {
                try db.execute("""
                    INSERT INTO minigameRecord (minigame, score, playerId, gameId, at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (minigame) DO UPDATE SET score = excluded.score, playerId = excluded.playerId,
                        gameId = excluded.gameId, at = excluded.at WHERE excluded.score > minigameRecord.score
                    """, Self.minigame, record.score, record.player, record.game, record.at)
            }
            return Summary(players: ids.count, games: games, results: 2 * games)
        }
    }
}

