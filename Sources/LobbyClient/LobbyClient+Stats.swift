import Foundation

extension LobbyClient {
    /// A player's statistics (yours, or those of a player you see or have unlocked).
    public func statistics(of username: String) async throws -> PlayerStatistics {
        try await send(.GET, "/v1/players/\(escaped(username))/stats")
    }

    /// A page of `board` (`day`, `week`, `month`, `all` or `league`); `date` (`YYYY-MM-DD`, your
    /// zone) picks another window than the current one.
    public func leaderboard(_ board: String, date: String? = nil, offset: Int = 0, limit: Int = 20) async throws -> Leaderboard {
        var path = "/v1/leaderboards/\(escaped(board))?offset=\(offset)&limit=\(limit)"
        if let date { path += "&date=\(escaped(date))" }
        return try await send(.GET, path)
    }

    public func achievements() async throws -> [AchievementProgress] { try await send(.GET, "/v1/achievements") }

    /// Sets the optional profile fields: an IANA `timeZone` and an ISO 3166-1 alpha-2 `country`
    /// (nil leaves one as it is, an empty string clears it).
    public func updateSettings(timeZone: String? = nil, country: String? = nil) async throws -> PlayerProfile {
        struct Body: Encodable { var timeZone, country: String? }
        return try await send(.PATCH, "/v1/players/me", body: Body(timeZone: timeZone, country: country))
    }
}
