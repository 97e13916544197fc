import Foundation
import LobbyClient
import Logging
import Minigames

/// A round as the lobby planned it.
public struct RoundPlanned: Sendable, Equatable {
    /// The game, or the tournament, the round belongs to.
    public var game: Int64
    public var round: Int
    public var minigame: MinigameName
    /// Seconds the round lasts, when the lobby said; else the game's own length.
    public var duration: Double?
    /// Quickdraw: when the signal comes, as the lobby issued it.
    public var signalTime: Double?
}

/// A round played: the claimed score and the recording it came from, which the lobby verifies.
public struct PlayedRound: Sendable, Equatable {
    public var score: Int
    public var recording: RoundRecording

    public init(score: Int, recording: RoundRecording) {
        self.score = score
        self.recording = recording
    }
}

/// Plays rounds on this device's sensors (or its recorded inputs).
public protocol RoundPlaying: Sendable {
    /// Seconds the player gets to read the instructions before a round starts (0 for recordings).
    var countdown: Double { get }
    func play(_ round: RoundPlanned) async throws -> PlayedRound
}

/// What `play` answers.
public struct RoundReport: Codable, Sendable, Equatable {
    public var game: Int64
    public var round: Int
    public var minigame: MinigameName
    public var score: Int
    /// The idempotency key the score was queued under.
    public var key: String
}

/// Plays this player's rounds of a game and queues the scores: finds the next round without a
/// score of ours, plays it, and hands the score with its recording to the outgoing queue. Rounds
/// played are remembered in the store, so a restart never plays (or submits) one twice.
public actor GameSession {
    let store: AgentStore
    let lobby: LobbyClient
    let outbox: Outbox
    let events: AgentEventBus
    let username: String
    private let player: any RoundPlaying
    /// What the countdown before a round waits on.
    private let clock: AgentClock
    let logger: Logger
    private var playing: Set<Int64> = []
    /// Tournaments whose rounds are being played.
    var playingTournaments: Set<Int64> = []

    public init(store: AgentStore, lobby: LobbyClient, outbox: Outbox, events: AgentEventBus, username: String,
                player: any RoundPlaying, clock: AgentClock = .system, logger: Logger = Logger(label: "nearplay.game")) {
        self.store = store
        self.lobby = lobby
        self.outbox = outbox
        self.events = events
        self.username = username
        self.player = player
        self.clock = clock
        self.logger = logger
    }

    /// Plays the next round of `game` that has no score of ours yet.
    public func playNext(game id: Int64) async throws(AgentError) -> RoundReport {
        guard playing.insert(id).inserted else {
            throw AgentError("A round of game \(id) is being played already.", code: "busy")
        }
        defer { playing.remove(id) }
        let next: LobbyEvent.PlannedRound
        do {
            let game = try await lobby.game(id)
            guard game.state == .open else {
                throw AgentError("Game \(id) is \(game.state.rawValue), not open: \(game.state == .pending ? "wait for the invitees to answer" : "there is nothing left to play").", code: "notOpen")
            }
            let rounds = game.rounds.sorted { $0.n < $1.n }
            try? store.savePlan(game: id, rounds: rounds.map { LobbyEvent.PlannedRound(n: $0.n, game: $0.game, duration: $0.duration, signalTime: $0.signalTime) })
            guard let round = rounds.first(where: { $0.scores[username] == nil && !played(id, $0.n) }) else {
                throw AgentError("You have played every round of game \(id); wait for the others.", code: "nothingToPlay")
            }
            next = LobbyEvent.PlannedRound(n: round.n, game: round.game, duration: round.duration, signalTime: round.signalTime)
        } catch let error as AgentError {
            throw error
        } catch let error as LobbyClientError {
            throw AgentError(error.message, code: error.code.rawValue)
        } catch {
            // The lobby is away: play on the plan it gave when the game started (the score waits
            // in the queue); without one there is nothing to play on.
            guard let rounds = store.plan(game: id) else {
                throw AgentError("Cannot reach the lobby to read game \(id): \(error). Try again when it is back.", code: "lobbyUnreachable")
            }
            guard let round = rounds.sorted(by: { $0.n < $1.n }).first(where: { !played(id, $0.n) }) else {
                throw AgentError("You have played every round of game \(id); wait for the others.", code: "nothingToPlay")
            }
            logger.notice("the lobby is unreachable (\(error)); playing round \(round.n) of game \(id) on the plan it gave, the score waits in the queue")
            next = round
        }
        let plan = RoundPlanned(game: id, round: next.n, minigame: next.game.name, duration: next.duration, signalTime: next.signalTime)
        let result = try await playAnnounced(plan)
        // The score and the note that the round was played are committed together: a crash
        // between them can neither lose the score nor play the round again.
        let key = try await outbox.enqueue(.score(game: id, round: next.n, score: result.score, recording: result.recording),
                                           alsoSetting: ("played:\(id):\(next.n)", "queued"))
        events.publish(.roundPlayed(.game(id), round: next.n, minigame: next.game.name, score: result.score))
        return RoundReport(game: id, round: next.n, minigame: next.game.name, score: result.score, key: key)
    }

    /// Plays every round of `game` still ours to play, one after the other (the `autoPlay`
    /// setting, for devices with recorded inputs).
    public func playAll(game id: Int64) async {
        while !Task.isCancelled {
            do {
                _ = try await playNext(game: id)
            } catch {
                if error.code != "nothingToPlay" { logger.notice("stopped playing game \(id): \(error.message)") }
                return
            }
        }
    }

    /// Announces `plan` (a `round_starting` event with the game's instructions), waits out the
    /// countdown and plays it. `tournament`: the round is one of that tournament's, not a game's.
    func playAnnounced(_ plan: RoundPlanned, tournament: Int64? = nil) async throws(AgentError) -> PlayedRound {
        let instructions = MinigameCatalog.game(named: plan.minigame).map { "\($0.instructions) (\(Int($0.duration)) s)" }
        let countdown = player.countdown
        events.publish(.roundStarting(tournament.map { .tournament($0) } ?? .game(plan.game), round: plan.round, minigame: plan.minigame,
                                      instructions: (instructions ?? plan.minigame.rawValue) + (countdown > 0 ? ", starting in \(Int(countdown)) s" : "")))
        do {
            if countdown > 0 { try await clock.sleep(for: .seconds(countdown)) }
            return try await player.play(try await revealingSignal(plan, tournament: tournament))
        } catch let error as AgentError {
            throw error
        } catch is CancellationError {
            throw AgentError("The round was interrupted; no score.", code: "interrupted")
        } catch {
            throw AgentError("The round could not be played: \(error)", code: "sensorFailure")
        }
    }

    /// `plan` with Quickdraw's signal, which the lobby reveals only as the round starts (and holds
    /// the reaction to the time of the reveal); other games' plans as they are. The signal is then
    /// placed on this device's clock that many seconds after the reveal's answer came: later than
    /// on the lobby's clock, never earlier, so the reaction is never shorter than the lobby sees it.
    func revealingSignal(_ plan: RoundPlanned, tournament: Int64?) async throws(AgentError) -> RoundPlanned {
        guard plan.minigame == .quickdraw, plan.signalTime == nil else { return plan }
        var revealed = plan
        do {
            let reveal = if let tournament {
                try await lobby.revealTournamentSignal(tournament: tournament, round: plan.round)
            } else {
                try await lobby.revealSignal(game: plan.game, round: plan.round)
            }
            revealed.signalTime = reveal.signalTime
        } catch let error as LobbyClientError {
            throw AgentError(error.message, code: error.code.rawValue)
        } catch {
            throw AgentError("Cannot reach the lobby at \(lobby.baseURL) for the quickdraw signal of round \(plan.round) (\(error)); "
                             + "a quickdraw round needs the lobby as it starts: play it when the lobby is back.", code: "lobbyUnreachable")
        }
        return revealed
    }

    func played(_ game: Int64, _ round: Int) -> Bool {
        ((try? store.setting("played:\(game):\(round)")) ?? nil) != nil
    }
}
