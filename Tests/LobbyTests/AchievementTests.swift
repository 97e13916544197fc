import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

@Suite struct AchievementTests {
    func granted(_ lobby: TestLobby, _ player: Int64) async throws -> [String: [Int]] {
        var granted: [String: [Int]] = [:]
        for achievement in try await lobby.store.achievements(player) {
            let tiers = achievement.tiers.filter { $0.grantedAt != nil }.map(\.tier)
            if !tiers.isEmpty { granted[achievement.achievement] = tiers }
        }
        return granted
    }

    func events(_ lobby: TestLobby, _ player: Int64) async throws -> [String] {
        try await lobby.store.events(player, after: 0, limit: 1000)
            .filter { $0.kind == .achievementUnlocked }.map { "\($0.data.achievement ?? "?") \($0.data.tier ?? 0)" }
    }

    @Test func everyAchievementIsListedWithItsProgress() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob")
        try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), key: "g")
        let list = try await lobby.store.achievements(ids[1])
        #expect(list.map(\.achievement) == ["firstWin", "games", "wins.screamer", "wins.shaker", "wins.statue", "wins.quickdraw",
                                            "busyDay", "podium", "tournamentWin", "collector"])
        let games = try #require(list.first { $0.achievement == "games" })
        #expect(games.value == 1)
        #expect(games.tiers.map(\.threshold) == [10, 50, 100])
        #expect(games.tiers.map(\.title) == ["Regular I", "Regular II", "Regular III"])
        #expect(games.tiers.allSatisfy { $0.grantedAt == nil })
        #expect(list.first { $0.achievement == "collector" }?.value == 1)
    }

    /// The first win is granted in the transaction that records it and returned by the submission
    /// that finished the game; a retry of that submission answers the same and grants nothing more.
    @Test func firstWinComesWithTheFinishingSubmissionAndOnlyOnce() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob")
        let receipt = try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), key: "g")
        #expect(receipt.game.achievements?.map(\.achievement) == ["firstWin"])
        #expect(receipt.game.achievements?.first?.title == "First win")
        let game = receipt.game.id
        let retry = try await lobby.submit(ids[0], game: game, round: 1, score: 900, key: "g-w")
        #expect(!retry.created)
        #expect(retry.game.achievements == receipt.game.achievements)
        #expect(try await events(lobby, ids[0]) == ["firstWin 1"])
        #expect(try await events(lobby, ids[1]) == [])
        #expect(try await granted(lobby, ids[1])["firstWin"] == nil)
        // Granting again in another transaction finds nothing new.
        let (store, now, alice) = (lobby.store, lobby.clock.now(), ids[0])
        let recorded = try await store.database.write { db in
            var context = WriteContext(db: db, now: now)
            try store.grantAchievements(&context, player: alice, boards: [], gameId: nil, round: nil)
            return context.events.count
        }
        #expect(recorded == 0)
        #expect(try await lobby.count("achievement", "playerId = ?", [ids[0]]) == 1)
    }

    @Test func gamesPlayedUnlockedPlayersAndMinigameWinsReachTheirTiers() async throws {
        let lobby = try await TestLobby.oneRound()
        let alice = try await lobby.player("alice").id
        var last: ScoreReceipt?
        for index in 1...10 {
            let name = "rival\(index)"
            let rival = try await lobby.player(name).id
            last = try await lobby.play((alice, "alice"), beats: (rival, name), key: "g\(index)")
            let reached = try await granted(lobby, alice)
            #expect(reached["wins.statue"] == (index >= 5 ? [1] : nil), "after game \(index)")
            #expect(reached["games"] == (index >= 10 ? [1] : nil), "after game \(index)")
            #expect(reached["collector"] == (index >= 10 ? [1] : nil), "after game \(index)")
        }
        #expect(Set(last?.game.achievements?.map(\.achievement) ?? []) == ["games", "collector"])
        // The higher tiers come from the same counters: 49 games + 1 is the second tier.
        try await lobby.store.database.write { [alice] db in
            try db.execute("UPDATE playerTotals SET games = 49, losses = 49 - wins - draws WHERE playerId = ?", alice)
        }
        let rival = try await lobby.player("rival11").id
        let receipt = try await lobby.play((alice, "alice"), beats: (rival, "rival11"), key: "g11")
        #expect(receipt.game.achievements?.map { "\($0.achievement) \($0.tier)" } == ["games 2"])
        #expect(try await events(lobby, alice).filter { $0.hasPrefix("games") } == ["games 1", "games 2"])
    }

    @Test func sixGamesInOneLocalDayIsABusyDay() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("alice", "bob")
        try await lobby.setZone(ids[0], "America/New_York")
        lobby.move(to: TestLobby.instant("2027-02-01T05:10:00Z")) // 00:10 in New York
        for index in 1...5 {
            try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), draw: true, key: "g\(index)")
            lobby.clock.advance(by: 3 * 3600)
        }
        // 15:10 local: five games so far today; the sixth, at 04:50 UTC the next day, is still 23:50 here.
        lobby.move(to: TestLobby.instant("2027-02-02T04:50:00Z"))
        #expect(try await granted(lobby, ids[0])["busyDay"] == nil)
        let receipt = try await lobby.play((ids[0], "alice"), beats: (ids[1], "bob"), draw: true, key: "g6")
        #expect(receipt.game.achievements?.map(\.achievement) == ["busyDay"])
        // Bob counts in UTC: his games straddle two days (5 then 1), so no busy day for him.
        #expect(try await granted(lobby, ids[1])["busyDay"] == nil)
    }

    @Test func aTopThreePlaceOnABoardOfFiveCounts() async throws {
        let lobby = try await TestLobby.oneRound()
        let ids = try await lobby.players("anna", "bert", "cleo", "dora", "emil", "finn")
        try await lobby.play((ids[0], "anna"), beats: (ids[1], "bert"), key: "g1")
        try await lobby.play((ids[2], "cleo"), beats: (ids[3], "dora"), key: "g2")
        // Only four players on the boards so far: nobody is on a podium yet.
        #expect(try await lobby.count("achievement", "kind = 'podium'") == 0)
        let receipt = try await lobby.play((ids[4], "emil"), beats: (ids[5], "finn"), key: "g3")
        #expect(receipt.game.achievements?.map(\.achievement).contains("podium") == true)
        #expect(try await granted(lobby, ids[4])["podium"] == [1])
        #expect(try await granted(lobby, ids[5])["podium"] == nil)
        #expect(try await granted(lobby, ids[0])["podium"] == nil)
    }

    @Test func aTournamentWinIsGrantedOnce() async throws {
        let lobby = try await TestLobby()
        let alice = try await lobby.player("alice").id
        let (store, now) = (lobby.store, lobby.clock.now())
        for _ in 0..<2 {
            try await store.database.write { db in
                var context = WriteContext(db: db, now: now)
                try store.recordTournamentWin(&context, player: alice)
                _ = try context.storeEvents()
            }
        }
        #expect(try await granted(lobby, alice)["tournamentWin"] == [1])
        #expect(try await lobby.store.achievements(alice).first { $0.achievement == "tournamentWin" }?.value == 2)
        #expect(try await lobby.count("achievement", "playerId = ?", [alice]) == 1)
    }

    @Test func tiersFollowTheirThresholds() {
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.games, reachedBy: 9) == nil)
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.games, reachedBy: 50) == 1...2)
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.collector, reachedBy: 100) == 1...3)
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.wins("shaker"), reachedBy: 5) == 1...1)
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.wins("shaker"), reachedBy: 100) == 1...3)
        #expect(AchievementCatalog.tiers(of: AchievementCatalog.busyDay, reachedBy: 6) == 1...1)
    }
}
