import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

@Suite struct StatisticsTests {
    @Test func pointsFollowTheDocumentedRule() {
        #expect(PointsRule.points(roundsWon: 2, outcome: .win) == 6)
        #expect(PointsRule.points(roundsWon: 1, outcome: .loss) == 2)
        #expect(PointsRule.points(roundsWon: 0, outcome: .draw) == 2)
        #expect(PointsRule.points(roundsWon: 0, outcome: .loss) == 1)
    }

    /// A game at 23:30 in Los Angeles counts on that Los Angeles day, though it is the next day in UTC.
    @Test func groupsResultsByDayInThePlayersZone() async throws {
        let lobby = try await TestLobby.oneRound()
        let (alice, bob) = (try await lobby.player("alice").id, try await lobby.player("bob").id)
        try await lobby.setZone(alice, "America/Los_Angeles")
        lobby.move(to: TestLobby.instant("2027-06-16T06:30:00Z")) // 23:30 on 15 June in Los Angeles
        try await lobby.play((alice, "alice"), beats: (bob, "bob"), key: "g1")
        lobby.move(to: TestLobby.instant("2027-06-16T07:30:00Z")) // 00:30 on 16 June there
        try await lobby.play((bob, "bob"), beats: (alice, "alice"), key: "g2")

        let stats = try await lobby.store.statistics(viewer: alice, username: "alice")
        #expect(stats.timeZone == "America/Los_Angeles")
        #expect(stats.days.count == 30)
        #expect(stats.days.last?.day == "2027-06-16")
        #expect(stats.days[28] == .init(day: "2027-06-15", wins: 1, losses: 0, draws: 0))
        #expect(stats.days[29] == .init(day: "2027-06-16", wins: 0, losses: 1, draws: 0))
        #expect(stats.totals == .init(games: 2, wins: 1, losses: 1, draws: 0, roundsWon: 1, points: 5 + 1))
        // Bob has no zone: UTC, where both games fell on 16 June.
        let bobs = try await lobby.store.statistics(viewer: bob, username: "bob")
        #expect(bobs.timeZone == "UTC")
        #expect(bobs.days[29] == .init(day: "2027-06-16", wins: 1, losses: 1, draws: 0))
        #expect(bobs.days[28].wins + bobs.days[28].losses == 0)
    }

    @Test func ranksByUnlockedPlayersRecordsAndTopCountry() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob", "carol", "dave")
        let (alice, bob, carol, dave) = (ids[0], ids[1], ids[2], ids[3])
        try await lobby.setZone(bob, "Europe/Oslo", country: "no")
        try await lobby.setZone(carol, "Europe/Oslo", country: "NO")
        try await lobby.setZone(dave, "Europe/Berlin", country: "DE")
        try await lobby.play((alice, "alice"), beats: (bob, "bob"), key: "a-b")
        try await lobby.play((alice, "alice"), beats: (carol, "carol"), key: "a-c")
        try await lobby.play((dave, "dave"), beats: (alice, "alice"), draw: true, key: "d-a")
        let stats = try await lobby.store.statistics(viewer: alice, username: "alice")
        // Alice unlocked bob, carol and dave (each game makes the two persistent unlocks of each other).
        #expect(stats.unlocked.count == 3)
        #expect(stats.unlocked.rank == 1)
        #expect(stats.topOpponentCountry == "NO")
        #expect(stats.records == [.init(minigame: "statue", score: 900, holder: "alice", at: stats.records.first?.at ?? Date())])
        let bobs = try await lobby.store.statistics(viewer: bob, username: "bob")
        // Bob has alice and nothing more (she had nobody to hand over): 1, like carol and dave; alice is ahead.
        #expect(bobs.unlocked.count == 1)
        #expect(bobs.unlocked.rank == 2)
        #expect(bobs.unlocked.rankedPlayers == 4)
        let error = await #expect(throws: LobbyError.self) { _ = try await lobby.store.updateSettings(bob, PlayerSettings(timeZone: "Mars/Olympus")) }
        #expect(error?.message.hasPrefix("timeZone") == true)
    }

    @Test func aDeletedPlayerLeavesTheBoards() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob")
        try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), key: "g")
        #expect(try await lobby.store.leaderboard(viewer: ids[1], board: .allTime).participants == 2)
        try await lobby.store.deletePlayer(ids[0])
        let board = try await lobby.store.leaderboard(viewer: ids[1], board: .allTime)
        #expect(board.participants == 1)
        #expect(board.entries.map(\.username) == ["bob"])
        #expect(board.me?.rank == 1)
    }
}

@Suite struct LeaderboardTests {
    /// Puts points straight on a board, to test the ranking on chosen numbers.
    func seed(_ lobby: TestLobby, _ points: [(String, Int)], board: TalliedBoard = .allTime) async throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for (name, _) in points { ids[name] = try await lobby.player(name).id }
        let rows = points.map { (ids[$0.0]!, $0.1) }
        try await lobby.store.database.write { db in
            for (id, value) in rows {
                // In two steps, so the tally is kept through an update as well as an insert.
                try board.add(db, player: id, points: value - 1)
                try board.add(db, player: id, points: 1)
            }
        }
        return ids
    }

    @Test func tiesShareARankAndTheNextRankSkips() async throws {
        let lobby = try await TestLobby()
        let ids = try await seed(lobby, [("anna", 10), ("bert", 7), ("cleo", 7), ("dora", 5), ("emil", 5), ("finn", 5), ("gus", 1)])
        let page = try await lobby.store.leaderboard(viewer: ids["finn"]!, board: .allTime, limit: 100)
        #expect(page.entries.map(\.rank) == [1, 2, 2, 4, 4, 4, 7])
        #expect(page.entries.map(\.username) == ["anna", "bert", "cleo", "dora", "emil", "finn", "gus"])
        #expect(page.participants == 7)
        #expect(page.me == .init(rank: 4, username: "finn", points: 5))
        // Just ahead: the last one listed above with more points.
        #expect(page.ahead == .init(rank: 2, username: "cleo", points: 7))
        let top = try await lobby.store.leaderboard(viewer: ids["anna"]!, board: .allTime)
        #expect(top.me?.rank == 1)
        #expect(top.ahead == nil)
    }

    @Test func pagesStartWithTheRightRankInsideATie() async throws {
        let lobby = try await TestLobby()
        let ids = try await seed(lobby, [("anna", 10), ("bert", 7), ("cleo", 7), ("dora", 5), ("emil", 5), ("finn", 5), ("gus", 1)])
        let viewer = ids["gus"]!
        for (offset, names, ranks) in [(2, ["cleo", "dora"], [2, 4]), (3, ["dora", "emil"], [4, 4]), (4, ["emil", "finn"], [4, 4]),
                                       (5, ["finn", "gus"], [4, 7]), (6, ["gus"], [7]), (7, [], [])] {
            let page = try await lobby.store.leaderboard(viewer: viewer, board: .allTime, offset: offset, limit: 2)
            #expect(page.entries.map(\.username) == names, "offset \(offset)")
            #expect(page.entries.map(\.rank) == ranks, "offset \(offset)")
        }
        await #expect(throws: LobbyError.self) { _ = try await lobby.store.leaderboard(viewer: viewer, board: .allTime, limit: 101) }
        await #expect(throws: LobbyError.self) { _ = try await lobby.store.leaderboard(viewer: viewer, board: .allTime, offset: -1) }
        #expect(throws: LobbyError.self) { _ = try BoardKind(parsing: "yearly") }
    }

    @Test func playersWithoutPointsInTheWindowAreLeftOut() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob", "carol")
        try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), key: "g1")
        lobby.clock.advance(by: 2 * 86400)
        try await lobby.play((ids[2], "carol"), beats: (ids[1], "bob"), draw: true, key: "g2")
        let day = try await lobby.store.leaderboard(viewer: ids[0], board: .day)
        #expect(day.entries.map(\.username) == ["bob", "carol"])
        #expect(day.entries.map(\.points) == [2, 2])
        #expect(day.entries.map(\.rank) == [1, 1])
        #expect(day.me == nil)
        #expect(day.participants == 2)
        let all = try await lobby.store.leaderboard(viewer: ids[0], board: .allTime)
        #expect(all.entries.map(\.username) == ["alice", "bob", "carol"])
        #expect(all.entries.map(\.points) == [5, 3, 2])
    }

    /// Each player's points land in the window of its own zone; the caller's zone picks the window.
    @Test func windowsAreLocalToEachZone() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("kiri", "lars")
        let (kiri, lars) = (ids[0], ids[1])
        try await lobby.setZone(kiri, "Pacific/Auckland")     // UTC+13 in January
        try await lobby.setZone(lars, "America/Los_Angeles")  // UTC-8
        lobby.move(to: TestLobby.instant("2027-01-20T20:00:00Z")) // 09:00 on 21 Jan in Auckland, 12:00 on 20 Jan in LA
        try await lobby.play((kiri, "kiri"), beats: (lars, "lars"), key: "g")
        let kiris = try await lobby.store.leaderboard(viewer: kiri, board: .day)
        #expect(kiris.window == .init(start: "2027-01-21", end: "2027-01-21", timeZone: "Pacific/Auckland"))
        #expect(kiris.entries.map(\.username) == ["kiri"])
        let lars20 = try await lobby.store.leaderboard(viewer: lars, board: .day)
        #expect(lars20.window?.start == "2027-01-20")
        #expect(lars20.entries.map(\.username) == ["lars"])
        let earlier = try await lobby.store.leaderboard(viewer: kiri, board: .day, date: "2027-01-20")
        #expect(earlier.entries.map(\.username) == ["lars"])
        #expect(earlier.me == nil)
        // The week (Monday 18 to Sunday 24 January) holds both.
        let week = try await lobby.store.leaderboard(viewer: lars, board: .week)
        #expect(week.window == .init(start: "2027-01-18", end: "2027-01-24", timeZone: "America/Los_Angeles"))
        #expect(week.entries.map(\.username) == ["kiri", "lars"])
        let month = try await lobby.store.leaderboard(viewer: lars, board: .month)
        #expect(month.window?.start == "2027-01-01")
        #expect(month.window?.end == "2027-01-31")
        #expect(month.participants == 2)
    }

    /// On the night Oslo leaves summer time, 23:30 on Sunday is still that week; 00:10 is the next.
    @Test func weekBoundaryAcrossTheDaylightSavingChange() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("olga", "pers")
        let (olga, pers) = (ids[0], ids[1])
        try await lobby.setZone(olga, "Europe/Oslo")
        try await lobby.setZone(pers, "Europe/Oslo")
        lobby.move(to: TestLobby.instant("2027-10-31T22:30:00Z")) // 23:30 CET, Sunday 31 October
        try await lobby.play((olga, "olga"), beats: (pers, "pers"), key: "sunday")
        lobby.move(to: TestLobby.instant("2027-10-31T23:10:00Z")) // 00:10 CET, Monday 1 November
        try await lobby.play((pers, "pers"), beats: (olga, "olga"), key: "monday")
        let sunday = try await lobby.store.leaderboard(viewer: olga, board: .week, date: "2027-10-31")
        #expect(sunday.window == .init(start: "2027-10-25", end: "2027-10-31", timeZone: "Europe/Oslo"))
        #expect(sunday.entries.map { "\($0.username) \($0.points)" } == ["olga 5", "pers 1"])
        let monday = try await lobby.store.leaderboard(viewer: olga, board: .week)
        #expect(monday.window?.start == "2027-11-01")
        #expect(monday.entries.map { "\($0.username) \($0.points)" } == ["pers 5", "olga 1"])
        #expect(monday.ahead?.username == "pers")
        let october = try await lobby.store.leaderboard(viewer: pers, board: .month, date: "2027-10-15")
        #expect(october.entries.map(\.points) == [5, 1])
        let november = try await lobby.store.leaderboard(viewer: pers, board: .month)
        #expect(november.entries.map(\.username) == ["pers", "olga"])
    }
}

@Suite struct LeagueTests {
    @Test func theTopFifthMovesUpAndTheBottomFifthDown() {
        #expect(LeagueRule.movers(groupSize: 1) == 0)
        #expect(LeagueRule.movers(groupSize: 2) == 1)
        #expect(LeagueRule.movers(groupSize: 10) == 2)
        #expect(LeagueRule.movers(groupSize: 20) == 4)
        #expect(LeagueRule.nextTier(tier: 2, rank: 2, groupSize: 10, weeksMissed: 0) == 3)
        #expect(LeagueRule.nextTier(tier: 2, rank: 3, groupSize: 10, weeksMissed: 0) == 2)
        #expect(LeagueRule.nextTier(tier: 2, rank: 9, groupSize: 10, weeksMissed: 0) == 1)
        #expect(LeagueRule.nextTier(tier: 5, rank: 1, groupSize: 10, weeksMissed: 0) == 5)
        #expect(LeagueRule.nextTier(tier: 1, rank: 10, groupSize: 10, weeksMissed: 3) == 1)
        #expect(LeagueRule.nextTier(tier: 3, rank: 5, groupSize: 10, weeksMissed: 1) == 2)
        // A tie on the edge favours the players: all of rank 2 go up, rank 8 of 10 stays.
        #expect(LeagueRule.zone(rank: 2, groupSize: 10) == (true, false))
        #expect(LeagueRule.zone(rank: 8, groupSize: 10) == (false, false))
        #expect(LeagueRule.zone(rank: 9, groupSize: 10) == (false, true))
    }

    @Test func promotionAndDemotionFromAWeeksStandings() async throws {
        let lobby = try await TestLobby()
        let names = (1...10).map { "player\($0)" }
        var ids: [Int64] = []
        for name in names { ids.append(try await lobby.player(name).id) }
        let week = LocalCalendar.day(fromText: "2027-01-18")!
        let store = lobby.store
        let players = ids
        try await store.database.write { db in
            // Points 100, 90, …, 10: player1 and player2 go up, player9 and player10 would go down (tier 1 floors them).
            for (index, id) in players.enumerated() {
                try store.addLeaguePoints(db, player: id, week: week, points: 100 - 10 * index)
            }
        }
        lobby.move(to: TestLobby.instant("2027-01-20T12:00:00Z"))
        let board = try await lobby.store.leaderboard(viewer: ids[0], board: .league)
        #expect(board.league == .init(tier: 1, name: "Bronze", group: 1, promoted: 2, demoted: 0))
        #expect(board.entries.map(\.movement) == ["up", "up", nil, nil, nil, nil, nil, nil, nil, nil])
        #expect(board.participants == 10)

        let next = week + 7
        let tiers = try await store.database.write { db in
            for (index, id) in players[0..<2].enumerated() { try store.addLeaguePoints(db, player: id, week: next, points: [30, 10][index]) }
            return try players.map { try store.tier(db, player: $0, week: next) }
        }
        #expect(tiers == [2, 2, 1, 1, 1, 1, 1, 1, 1, 1])
        // In Silver the two of them are a group of two: the winner goes up, the other down.
        let third = try await store.database.read { db in
            try players[0..<2].map { try store.tier(db, player: $0, week: next + 7) }
        }
        #expect(third == [3, 1])
        // Skipping a week costs a tier more: player1 would be Gold after its win, Silver after a missed week.
        let skipped = try await store.database.read { db in try store.tier(db, player: players[0], week: next + 14) }
        #expect(skipped == 2)
    }

    @Test func groupsFillUpToTwentyThenANewOneOpens() async throws {
        let lobby = try await TestLobby()
        var ids: [Int64] = []
        for index in 0..<21 { ids.append(try await lobby.player("p\(index)xx").id) }
        let week = LocalCalendar.day(fromText: "2027-01-18")!
        let store = lobby.store
        let players = ids
        let groups = try await store.database.write { db in
            for id in players { try store.addLeaguePoints(db, player: id, week: week, points: 3) }
            try store.addLeaguePoints(db, player: players[0], week: week, points: 4)
            return try db.fetchAll("SELECT groupNumber FROM league WHERE week = ? ORDER BY playerId", week).map { try $0.get(0, as: Int.self) }
        }
        #expect(groups == Array(repeating: 1, count: 20) + [2])
        let points = try await store.database.read { db in
            try db.fetchValue(Int.self, "SELECT points FROM league WHERE week = ? AND playerId = ?", week, players[0])
        }
        #expect(points == 7)
    }

    @Test func aGamesPointsGoToEachPlayersLeague() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob")
        try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), key: "g")
        let board = try await lobby.store.leaderboard(viewer: ids[1], board: .league)
        #expect(board.entries.map { "\($0.rank) \($0.username) \($0.points) \($0.movement ?? "-")" } == ["1 alice 5 up", "2 bob 1 -"])
        #expect(board.me?.rank == 2)
        #expect(board.ahead?.username == "alice")
    }
}
