import LobbyClient
import Minigames
import SensorSamples
import Testing
import enum Lobby.SyntheticRecording

extension LobbyClient {
    /// A recording of round `n` of game `id`, on the plan the lobby gives for it, that scores
    /// exactly `score` under `calibration`.
    func honestRecording(game id: Int64, round n: Int, score: Int, calibration: SensorCalibration = SensorCalibration()) async throws -> RoundRecording {
        let round = try #require(try await game(id).rounds.first { $0.n == n }, "game \(id) has no round \(n)")
        return try #require(SyntheticRecording.scoring(
            score, game: round.game, duration: round.duration, signalTime: round.signalTime, calibration: calibration),
            "no \(round.game) recording scores \(score)")
    }

    /// Submits `score` for round `n` of game `id` with a recording that gives it.
    @discardableResult
    func submitHonestly(game id: Int64, round n: Int, score: Int, key: String) async throws -> LobbyGame {
        let recording = try await honestRecording(game: id, round: n, score: score)
        return try await submitScore(game: id, round: n, score: score, recording: recording, key: key)
    }
}

/// The first `count` live events of `client` after `cursor`, listening while `actions` run; the
/// socket closes when they have arrived.
func liveEvents(
    of client: LobbyClient, after cursor: Int64, count: Int, during actions: () async throws -> Void = {}
) async throws -> [LobbyEvent] {
    let stream = client.liveEvents(after: cursor)
    try await actions()
    var events: [LobbyEvent] = []
    for try await event in stream {
        events.append(event)
        if events.count == count { break }
    }
    return events
}
