import Minigames

/// Every achievement there is, with its tiers: nothing hidden, each shown with its progress.
///
/// An achievement measures one number (games played, rounds of a minigame won, …); tier `k` is
/// granted once that number reaches `thresholds[k - 1]`, at most once per player.
public struct AchievementKind: Sendable, Hashable {
    /// Stable identifier, e.g. `games` or `wins.screamer`.
    public let id: String
    public let title: String
    /// What is counted, for a sentence like "10 of 50 games played".
    public let measure: String
    public let thresholds: [Int]

    /// `title`, with the tier in Roman numerals when there are several.
    public func title(tier: Int) -> String {
        thresholds.count == 1 ? title : "\(title) \(["I", "II", "III", "IV", "V"][min(tier, 5) - 1])"
    }
}

public enum AchievementCatalog {
    public static let firstWin = AchievementKind(id: "firstWin", title: "First win", measure: "games won", thresholds: [1])
    public static let games = AchievementKind(id: "games", title: "Regular", measure: "games played", thresholds: [10, 50, 100])
    public static let busyDay = AchievementKind(id: "busyDay", title: "Busy day", measure: "games in one day", thresholds: [6])
    public static let podium = AchievementKind(id: "podium", title: "On the podium", measure: "top-3 places on a board", thresholds: [1])
    public static let tournamentWin = AchievementKind(id: "tournamentWin", title: "Tournament winner", measure: "tournaments won", thresholds: [1])
    public static let collector = AchievementKind(id: "collector", title: "Collector", measure: "players unlocked", thresholds: [10, 50, 100])

    /// Rounds of `minigame` won: 5, 50, 100.
    public static func wins(_ minigame: MinigameName) -> AchievementKind {
        let name = minigame.rawValue
        return AchievementKind(id: "wins.\(name)", title: "\(name.prefix(1).uppercased() + name.dropFirst()) champion",
                               measure: "\(name) rounds won", thresholds: [5, 50, 100])
    }

    /// All of them, in the order they are shown: the minigame ones for every game of the catalog.
    public static let all: [AchievementKind] =
        [firstWin, games] + MinigameCatalog.all.map { wins($0.name) } + [busyDay, podium, tournamentWin, collector]

    public static func kind(id: String) -> AchievementKind? { all.first { $0.id == id } }

    /// The tiers a value reaches.
    public static func tiers(of kind: AchievementKind, reachedBy value: Int) -> ClosedRange<Int>? {
        let reached = kind.thresholds.filter { value >= $0 }.count
        return reached == 0 ? nil : 1...reached
    }
}
