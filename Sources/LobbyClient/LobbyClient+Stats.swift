import Foundation

extension LobbyClient {
    /// A player's statistics (yours, or those of a player you see or have unlocked).
    public func statistics(of username: String) async throws -> PlayerStatistics {
        try await call { try await $0.getStatistics(path: .init(username: username)).ok.body.json }
    }

    /// A page of `board` (`day`, `week`, `month`, `all`, `league`, `location:ID` or
    /// `tournament:ID`); `date` (`YYYY-MM-DD`, your zone) picks another window than the current one.
    public func leaderboard(_ board: String, date: String? = nil, offset: Int = 0, limit: Int = 20) async throws -> Leaderboard {
        try await call {
            try await $0.getLeaderboard(path: .init(board: board), query: .init(date: date, offset: offset, limit: limit)).ok.body.json
        }
    }

    public func achievements() async throws -> [AchievementProgress] { try await call { try await $0.listAchievements().ok.body.json } }

    /// Sets the optional profile fields: an IANA `timeZone` and an ISO 3166-1 alpha-2 `country`
    /// (nil leaves one as it is, an empty string clears it).
    public func updateSettings(timeZone: String? = nil, country: String? = nil) async throws -> PlayerProfile {
        try await call { try await $0.updateMe(body: .json(.init(timeZone: timeZone, country: country))).ok.body.json }
    }
}
