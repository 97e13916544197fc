import Foundation
import LobbyClient
import Minigames
import SensorSamples
import Testing
import enum Lobby.SyntheticRecording

extension LobbyClient {
    /// A recording of round `n` of game `id`, on the plan the lobby gives for it, that scores
    /// exactly `score` under `calibration`. Quickdraw: on the signal revealed now, so a score
    /// above 0 stands only once the reaction has passed on the lobby's clock (use 0 to send at once).
    func honestRecording(game id: Int64, round n: Int, score: Int, calibration: SensorCalibration = SensorCalibration()) async throws -> RoundRecording {
        let round = try #require(try await game(id).rounds.first { $0.n == n }, "game \(id) has no round \(n)")
        let signal = round.game == .quickdraw ? try await revealSignal(game: id, round: n).signalTime : nil
        return try #require(SyntheticRecording.scoring(
            score, game: round.game.name, duration: round.duration, signalTime: signal, calibration: calibration),
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
/// socket closes when they have arrived. Waits at most `seconds`: then it records what did arrive
/// and what the event feed holds (whether the events exist and the push lost them), and returns
/// what arrived.
func liveEvents(
    of client: LobbyClient, after cursor: Int64, count: Int, within seconds: Double = 90, recordingTimeout: Bool = true,
    during actions: () async throws -> Void = {}
) async throws -> [LobbyEvent] {
    let stream = client.liveEvents(after: cursor)
    try await actions()
    let arrived = Arrived()
    let complete = try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            var stream = stream
            while true {
                do {
                    for try await event in stream {
                        if arrived.append(event) == count { return true }
                    }
                    return true
                } catch let error as LobbyClientError where error.code == "liveEventsTimedOut" && arrived.all.isEmpty {
                    // The socket never opened: connect again, as the agent does.
                    stream = client.liveEvents(after: cursor)
                }
            }
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return false
        }
        let first = try await group.next() ?? false
        group.cancelAll()
        return first
    }
    let events = arrived.all
    if !complete && recordingTimeout {
        let feed = (try? await client.events(after: cursor).events.map(\.kind)) ?? []
        Issue.record("Waited \(Int(seconds)) s for \(count) live events after cursor \(cursor): \(events.map(\.kind)) arrived; the feed holds \(feed).")
    }
    return events
}

private final class Arrived: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [LobbyEvent] = []
    var all: [LobbyEvent] { lock.withLock { events } }
    /// Adds `event`; the number held now.
    func append(_ event: LobbyEvent) -> Int { lock.withLock { events.append(event); return events.count } }
}
