import Foundation
import GRDB
import LobbyDatabase

extension LobbyStore {
    /// Adds a result's points to the player's league standing of `week` (the Monday of its local
    /// week). The first result of a week places the player: its tier follows from its last week
    /// played (``LeagueRule``), computed here from that week's final standings (they no longer
    /// change), and it joins the newest group of that tier this week with room, else opens one.
    func addLeaguePoints(_ db: any SQLSession, player: Int64, week: Int, points: Int) throws {
        let changed = try db.execute("UPDATE league SET points = points + ? WHERE week = ? AND playerId = ?", points, week, player)
        if changed > 0 { return }
        let tier = try tier(db, player: player, week: week)
        let last = try db.fetchOne("""
            SELECT groupNumber, COUNT(*) FROM league WHERE week = ? AND tier = ?
            GROUP BY groupNumber ORDER BY groupNumber DESC LIMIT 1
            """, week, tier)
        let lastGroup = try last?.get(0, as: Int.self), lastCount = try last?.get(1, as: Int.self)
        let group = if let lastGroup, let lastCount, lastCount < LeagueRule.groupSize { lastGroup } else { (lastGroup ?? 0) + 1 }
        try db.execute("INSERT INTO league (week, playerId, tier, groupNumber, points) VALUES (?, ?, ?, ?, ?)", week, player, tier, group, points)
    }

    /// The tier the player plays `week` in: from its last week before, promoted or demoted by its
    /// rank in that week's group; the first tier if it never played.
    func tier(_ db: any SQLSession, player: Int64, week: Int) throws -> Int {
        guard let last = try db.fetchOne("""
            SELECT week, tier, groupNumber, points FROM league WHERE playerId = ? AND week < ? ORDER BY week DESC LIMIT 1
            """, player, week)
        else { return 1 }
        let (lastWeek, tier, group, points) = (try last.get(0, as: Int.self), try last.get(1, as: Int.self),
                                               try last.get(2, as: Int.self), try last.get(3, as: Int.self))
        let source = Self.leagueGroup(week: lastWeek, tier: tier, group: group)
        let size = try source.participants(db)
        let rank = 1 + (try source.playersAbove(db, points: points))
        return LeagueRule.nextTier(tier: tier, rank: rank, groupSize: size, weeksMissed: (week - lastWeek) / 7 - 1)
    }

    static func leagueGroup(week: Int, tier: Int, group: Int) -> TableRanking {
        TableRanking(table: "league", filter: "week = ? AND tier = ? AND groupNumber = ?", arguments: [week, tier, group])
    }

    /// The viewer's league group of `week`, ranked, with who moves up and down.
    func leagueBoard(_ db: any SQLSession, viewer: Int64, week: Int, offset: Int, limit: Int) throws -> Leaderboard {
        let row = try db.fetchOne("SELECT tier, groupNumber FROM league WHERE week = ? AND playerId = ?", week, viewer)
        let tier: Int = try row?.get(0, as: Int.self) ?? self.tier(db, player: viewer, week: week)
        let group = try row?.get(1, as: Int?.self) ?? nil
        let window = Leaderboard.Window(
            start: LocalCalendar.text(ofDay: week), end: LocalCalendar.text(ofDay: week + 6),
            timeZone: try calendar(db, playerId: viewer).name)
        let name = LeagueRule.tierNames[tier - 1]
        guard let group else {
            return Leaderboard(
                board: "league", window: window,
                league: .init(tier: tier, name: name, group: nil, promoted: 0, demoted: 0),
                participants: 0, offset: offset, limit: limit, entries: [], me: nil, ahead: nil)
        }
        let source = Self.leagueGroup(week: week, tier: tier, group: group)
        return try leaderboard(db, source, viewer: viewer, name: "league", offset: offset, limit: limit,
            movement: { rank, size in
                let zone = LeagueRule.zone(rank: rank, groupSize: size)
                // Nobody goes above the top tier or below the first.
                return zone.promoted && tier < LeagueRule.tierNames.count ? "up" : zone.demoted && tier > 1 ? "down" : nil
            },
            decorate: { board in
                let movers = LeagueRule.movers(groupSize: board.participants)
                board.window = window
                board.league = .init(tier: tier, name: name, group: group,
                                     promoted: tier < LeagueRule.tierNames.count ? movers : 0, demoted: tier > 1 ? movers : 0)
            })
    }
}
