import Agent
import ArgumentParser
import Foundation
import LobbyClient

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "A player's results: totals, the last 30 days as a chart, ranks and records.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The player's username.") var player: String

    func run() throws {
        try agent.send(.stats(player: player), as: PlayerStatistics.self) { stats in
            let totals = stats.totals
            print("\(stats.username): \(totals.games) games since \(stats.registeredAt.formatted(.iso8601.year().month().day())), \(totals.wins) won, \(totals.losses) lost, \(totals.draws) drawn, \(totals.points) points")
            let recent = stats.days.reduce(into: (0, 0)) { $0.0 += $1.wins; $0.1 += $1.losses }
            print("last \(stats.days.count) days (\(stats.timeZone)): \(recent.0) won, \(recent.1) lost" + (stats.bestScore.map { ", best round \($0)" } ?? ""))
            for line in ResultsChart.lines(stats.days) { print(line) }
            print("unlocked \(stats.unlocked.count) players: rank \(stats.unlocked.rank) of \(max(stats.unlocked.rankedPlayers, stats.unlocked.rank))"
                  + (stats.topOpponentCountry.map { "; most come from \($0)" } ?? ""))
            for record in stats.records {
                print("record in \(record.minigame): \(record.score) by \(record.holder)")
            }
        }
    }
}

struct LeaderboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leaderboard", abstract: "A board by points: today, this week, this month, all time, or your league group.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "day, week, month, all, league, location:ID or tournament:ID.") var board = "week"
    @Option(help: ArgumentHelp("A date in the window to show (your zone).", valueName: "YYYY-MM-DD")) var date: String?
    @Option(help: "Skip this many entries.") var offset = 0
    @Option(help: "Entries to show (1 to 100).") var limit = 20

    func validate() throws {
        let parts = board.split(separator: ":", maxSplits: 1)
        let byId = parts.count == 2 && ["location", "tournament"].contains(String(parts[0])) && (Int64(parts[1]) ?? 0) > 0
        guard ["day", "week", "month", "all", "league"].contains(board) || byId else {
            throw ValidationError("board: \(board) is not a board; use day, week, month, all, league, location:ID or tournament:ID.")
        }
        guard offset >= 0 else { throw ValidationError("--offset: expected 0 or more.") }
        guard (1...100).contains(limit) else { throw ValidationError("--limit: expected 1 to 100.") }
    }

    func run() throws {
        try agent.send(.leaderboard(board: board, date: date, offset: offset, limit: limit), as: Leaderboard.self) { page in
            var title = page.board
            if let league = page.league { title = "\(league.name) league" + (league.group.map { ", group \($0)" } ?? "") }
            if let window = page.window {
                title += window.start == window.end ? " \(window.start)" : " \(window.start) to \(window.end)"
                title += " (\(window.timeZone))"
            }
            print("\(title): \(page.participants) players")
            if page.entries.isEmpty { print("  nobody has points here yet") }
            for entry in page.entries {
                let marker = entry.movement == .up ? " ↑" : entry.movement == .down ? " ↓" : ""
                let name = entry.username.count >= 32 ? entry.username : entry.username.padding(toLength: 32, withPad: " ", startingAt: 0)
                print(String(format: "%5d  ", entry.rank) + name + String(format: " %6d", entry.points) + marker)
            }
            if let me = page.me {
                print("you: rank \(me.rank) with \(me.points) points" + (page.ahead.map { "; \($0.username) is just ahead with \($0.points)" } ?? ""))
            } else {
                print("you have no points here yet: finish a game")
            }
        }
    }
}

struct AchievementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "achievements", abstract: "Every achievement and how far you are.")
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.achievements, as: [AchievementProgress].self) { achievements in
            for achievement in achievements {
                let granted = achievement.tiers.filter { $0.grantedAt != nil }.count
                let next = achievement.tiers.first { $0.grantedAt == nil }
                let progress = next.map { "\(achievement.value) of \($0.threshold) \(achievement.measure)" } ?? "all \(achievement.tiers.count) done"
                print("\(granted == 0 ? "·" : "★") \(achievement.title) (\(granted)/\(achievement.tiers.count)): \(progress)")
            }
        }
    }
}
