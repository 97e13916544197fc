import Foundation
import LobbyClient
import Minigames

/// A tournament round this device played, as `join` answers it.
public struct TournamentRoundReport: Codable, Sendable, Equatable {
    public var round: Int
    public var minigame: MinigameName
    public var score: Int
    /// The idempotency key the score was queued under.
    public var key: String
}

/// What `join` answers: the entry as the lobby holds it after joining, and the rounds played now
/// (their scores queued for the lobby, which verifies them).
public struct TournamentReport: Codable, Sendable, Equatable {
    public var tournament: Int64
    public var entry: TournamentEntry
    public var played: [TournamentRoundReport]
}

extension GameSession {
    /// Joins a tournament (the lobby checks that we are at its location) and plays every round of
    /// our entry not played yet, one after the other, queueing each score with its recording.
    /// Joining again resumes where a previous run stopped; rounds played are remembered in the
    /// store with their queued score, so none is played twice.
    public func joinAndPlay(tournament id: Int64) async throws(AgentError) -> TournamentReport {
        guard playingTournaments.insert(id).inserted else {
            throw AgentError("The rounds of tournament \(id) are being played already.", code: "busy")
        }
        defer { playingTournaments.remove(id) }
        let entry: TournamentEntry
        do {
            entry = try await lobby.joinTournament(id)
        } catch let error as LobbyClientError {
            throw AgentError(error.message, code: error.code.rawValue)
        } catch {
            throw AgentError("Cannot reach the lobby at \(lobby.baseURL) to join tournament \(id) (\(error)); try again when it is back.",
                             code: "lobbyUnreachable")
        }
        var played: [TournamentRoundReport] = []
        for round in entry.rounds.sorted(by: { $0.n < $1.n }) where round.score == nil {
            let setting = "played:tournament:\(id):\(round.n)"
            if ((try? store.setting(setting)) ?? nil) != nil { continue }
            let plan = RoundPlanned(game: id, round: round.n, minigame: round.game.name, duration: round.duration, signalTime: round.signalTime)
            let result = try await playAnnounced(plan, tournament: id)
            let key = try await outbox.enqueue(.tournamentScore(tournament: id, round: round.n, score: result.score, recording: result.recording),
                                               alsoSetting: (setting, "queued"))
            events.publish(.roundPlayed(.tournament(id), round: round.n, minigame: round.game.name, score: result.score))
            played.append(TournamentRoundReport(round: round.n, minigame: round.game.name, score: result.score, key: key))
        }
        return TournamentReport(tournament: id, entry: entry, played: played)
    }
}
