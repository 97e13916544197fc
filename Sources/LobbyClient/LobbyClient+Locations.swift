import Foundation
import Minigames
import NIOHTTP1

extension LobbyClient {
    /// Registers the location `name` (or re-uses the caller's location of that name).
    public func registerLocation(name: String, timeZone: String? = nil) async throws -> LobbyLocation {
        struct Body: Encodable { var name: String; var timeZone: String? }
        return try await send(.POST, "/v1/locations", body: Body(name: name, timeZone: timeZone))
    }

    public func location(_ id: Int64) async throws -> LobbyLocation { try await send(.GET, "/v1/locations/\(id)") }

    /// A location's tournaments, running ones first.
    public func tournaments(location id: Int64) async throws -> [TournamentSummary] {
        try await send(.GET, "/v1/locations/\(id)/tournaments")
    }

    /// One tournament with its standings.
    public func tournament(_ id: Int64) async throws -> TournamentSummary { try await send(.GET, "/v1/tournaments/\(id)") }

    /// Joins a running tournament (status 403, code `notNearLocation`, unless the lobby has a
    /// recent encounter of ours with its location); joining again returns the entry.
    public func joinTournament(_ id: Int64) async throws -> TournamentEntry { try await send(.POST, "/v1/tournaments/\(id)/entries") }

    public func tournamentEntry(_ id: Int64) async throws -> TournamentEntry { try await send(.GET, "/v1/tournaments/\(id)/entries/me") }

    /// Submits the score of round `n` of our entry with its recording, verified like a game's
    /// round; resubmitting with the same `key` is safe.
    public func submitTournamentScore(tournament id: Int64, round n: Int, score: Int, recording: RoundRecording, key: String) async throws -> TournamentEntry {
        struct Body: Encodable { var score: Int; var key: String; var recording: RoundRecording }
        return try await send(.POST, "/v1/tournaments/\(id)/entries/me/rounds/\(n)/scores", body: Body(score: score, key: key, recording: recording))
    }
}
