import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import LobbyClient
import Testing
@testable import LobbyServer

/// Statistics, boards and achievements through the real client against a live server.
@Suite struct StatisticsClientTests {
    @Test func statisticsBoardsAndAchievementsThroughTheClient() async throws {
        let server = try await TestServer { $0.roundsPerGame = 1 }
        try await server.application.test(.live) { testClient in
            let base = LobbyClient(baseURL: "http://127.0.0.1:\(try #require(testClient.port))")
            let bobPlayer = try await base.register(username: "bob", firstName: "Bob", lastName: "B", email: "bob@example.org", password: "password-123")
            _ = try await base.register(username: "alice", firstName: "Alice", lastName: "A", email: "alice@example.org", password: "password-123")
            let alice = base.authenticated(try await base.logIn(username: "alice", password: "password-123").token)
            let bob = base.authenticated(try await base.logIn(username: "bob", password: "password-123").token)
            let settings = try await alice.updateSettings(timeZone: "Europe/Oslo", country: "no")
            #expect(settings.timeZone == "Europe/Oslo")
            #expect(settings.country == "NO")
            #expect(try await alice.me().timeZone == "Europe/Oslo")
            let wrongZone = await #expect(throws: LobbyClientError.self) { try await alice.updateSettings(timeZone: "Nowhere/Else") }
            #expect(wrongZone?.status == 400)
            #expect(wrongZone?.message.hasPrefix("timeZone") == true)

            _ = try await alice.reportEncounters([
                EncounterSighting(uuid: bobPlayer.beacon.uuid, major: bobPlayer.beacon.major, minor: bobPlayer.beacon.minor, distance: 1, at: Date()),
            ])
            let invitation = try await alice.invite(["bob"])
            _ = try await bob.accept(invitation: invitation.id)
            try await bob.submitHonestly(game: invitation.id, round: 1, score: 100, key: "bob-1")
            let finished = try await alice.submitHonestly(game: invitation.id, round: 1, score: 800, key: "alice-1")
            #expect(finished.state == .finished)
            #expect(finished.achievements?.map(\.achievement) == ["firstWin"])
            let retried = try await alice.submitHonestly(game: invitation.id, round: 1, score: 800, key: "alice-1")
            #expect(retried.achievements == finished.achievements)

            let stats = try await alice.statistics(of: "alice")
            #expect(stats.timeZone == "Europe/Oslo")
            #expect(stats.totals.wins == 1)
            #expect(stats.days.count == 30)
            #expect(stats.days.last?.wins == 1)
            #expect(stats.unlocked.count == 1)
            #expect(stats.records.first?.holder == "alice")

            let week = try await bob.leaderboard("week")
            #expect(week.entries.map(\.username) == ["alice", "bob"])
            #expect(week.entries.map(\.points) == [5, 1])
            #expect(week.me?.rank == 2)
            #expect(week.ahead?.username == "alice")
            #expect(week.participants == 2)
            #expect(week.window?.timeZone == "UTC")
            let league = try await bob.leaderboard("league")
            #expect(league.league?.name == "Bronze")
            let badBoard = await #expect(throws: LobbyClientError.self) { try await bob.leaderboard("yearly") }
            #expect(badBoard?.status == 404)
            #expect(badBoard?.code == "boardNotFound")
            let badLimit = await #expect(throws: LobbyClientError.self) { try await bob.leaderboard("day", limit: 500) }
            #expect(badLimit?.status == 400)
            let badDate = await #expect(throws: LobbyClientError.self) { try await bob.leaderboard("day", date: "2026-02-30") }
            #expect(badDate?.status == 400)

            let achievements = try await alice.achievements()
            #expect(achievements.first { $0.achievement == "firstWin" }?.tiers.first?.grantedAt != nil)
            #expect(achievements.first { $0.achievement == "games" }?.value == 1)
            let events = try await alice.events(after: 0).events
            #expect(events.last?.kind == "achievementUnlocked")
            #expect(events.last?.data.achievement == "firstWin")
            #expect(events.last?.data.title == "First win")
        }
    }
}
