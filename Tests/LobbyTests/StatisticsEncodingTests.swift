import Foundation
import SystemSupport
import Testing
@testable import Lobby

/// The statistics answers are written by hand (JSONWriter); they must say what JSONEncoder would.
@Suite struct StatisticsEncodingTests {
    let check = EncodingTests()

    @Test func statisticsBoardsAndGrantsEncodeAsJSONEncoderWould() throws {
        for (index, name) in EncodingTests.awkward.enumerated() {
            let date = EncodingTests.dates[index % EncodingTests.dates.count]
            try check.expectSameJSON(PlayerStatistics(
                username: name, timeZone: "Europe/Oslo", registeredAt: date, spanDays: 30, gamesPlayed: index, gamesWon: 1,
                gamesLost: 2, gamesDrawn: 0, roundsWon: 3, bestScore: index.isMultiple(of: 2) ? nil : 999,
                totals: .init(games: 5, wins: 2, losses: 2, draws: 1, roundsWon: 4, points: 17),
                days: [.init(day: "2027-01-01", wins: 1, losses: 0, draws: 2), .init(day: "2027-01-02", wins: 0, losses: 0, draws: 0)],
                unlocked: .init(count: 3, rank: 12, rankedPlayers: 4000),
                records: index.isMultiple(of: 3) ? [] : [.init(minigame: "statue", score: 1000, holder: name, at: date)],
                topOpponentCountry: index.isMultiple(of: 2) ? "NO" : nil))
            let entry = Leaderboard.Entry(rank: index + 1, username: name, points: 7, movement: index.isMultiple(of: 2) ? nil : "up")
            try check.expectSameJSON(Leaderboard(
                board: "week", window: index.isMultiple(of: 2) ? nil : .init(start: "2027-01-18", end: "2027-01-24", timeZone: name),
                league: index.isMultiple(of: 3) ? .init(tier: 2, name: "Silver", group: index.isMultiple(of: 2) ? nil : 4, promoted: 1, demoted: 1) : nil,
                participants: 100, offset: 20, limit: 20, entries: [entry, entry], me: index.isMultiple(of: 2) ? entry : nil,
                ahead: index.isMultiple(of: 4) ? nil : entry))
            let grant = AchievementGrant(achievement: "wins.\(name)", tier: 2, title: "Champion \(name)", threshold: 50, grantedAt: date)
            try check.expectSameJSON(grant)
            try check.expectSameJSON(EventData(achievement: "games", tier: 1, title: name))
        }
    }
}
