import Foundation
import LobbyClient
import Logging
import Radio

/// Follows the lobby's event feed for this player and turns it into agent events: invitations,
/// answers, games starting and ending, round results, unlocks.
///
/// The cursor of the last event handled is kept in the agent's store, and after any disconnect
/// (or an agent restart) the feed is resumed after it, so nothing is missed and nothing is shown
/// twice.
///
/// What an event starts (a game to play, a peer's reading to hand on) runs as a child of
/// ``run()``, so it ends with the feed.
public actor LobbyEventsFollower {
    private let store: AgentStore
    private let lobby: LobbyClient
    private let events: AgentEventBus
    private let logger: Logger
    private let onGameStarted: @Sendable (Int64) async -> Void
    private let nearby: NearbyPlayers?
    private let clock: AgentClock
    /// Games being played, peers' readings being handed on.
    private let children = ChildTasks()
    private var cursor: Int64

    /// `nearby` receives the peers' readings of us (`peerReading` events) for two-way ranging.
    public init(store: AgentStore, lobby: LobbyClient, events: AgentEventBus, logger: Logger = Logger(label: "nearplay.lobby-events"),
                nearby: NearbyPlayers? = nil, clock: AgentClock = .system, onGameStarted: @escaping @Sendable (Int64) async -> Void = { _ in }) {
        self.nearby = nearby
        self.clock = clock
        self.store = store
        self.lobby = lobby
        self.events = events
        self.logger = logger
        self.onGameStarted = onGameStarted
        cursor = (try? store.setting("eventCursor")).flatMap { $0.flatMap { Int64($0) } } ?? 0
    }

    /// The cursor of the last event handled.
    public var lastCursor: Int64 { cursor }
    /// Times the event stream was connected again after the first (for `nearplay metrics`).
    public var reconnects: Int { max(0, connections - 1) }
    private var connections = 0

    /// Follows the feed until cancelled, reconnecting with backoff (0.25 s doubling to 8 s); what
    /// its events started is cancelled with it.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.children.run() }
            await follow()
            group.cancelAll()
        }
    }

    private func follow() async {
        var backoff = Backoff()
        var connected = false
        while !Task.isCancelled {
            do {
                for try await event in lobby.liveEvents(after: cursor) {
                    if !connected {
                        connected = true
                        connections += 1
                        backoff.reset()
                        self.events.publish(.lobbyConnected())
                    }
                    handle(event)
                }
                if Task.isCancelled { return }
                throw AgentError("the lobby closed the event stream")
            } catch {
                if Task.isCancelled { return }
                if connected {
                    connected = false
                    logger.notice("lost the lobby's event stream: \(error); resuming after \(cursor)")
                    events.publish(.lobbyDisconnected(reason: "\(error)"))
                }
                do { try await clock.wait(&backoff) } catch { return }
            }
        }
    }

    /// Handles one event of the feed; events at or before the cursor were handled already.
    func handle(_ event: LobbyEvent) {
        guard event.cursor > cursor else { return }
        cursor = event.cursor
        do {
            try store.setSetting("eventCursor", String(cursor))
        } catch {
            logger.warning("could not store the event cursor: \(error)")
        }
        let data = event.data
        switch event.eventKind {
        case .invitationReceived:
            events.publish(.invitationReceived(from: data.player, game: data.game, at: event.at))
        case .invitationAnswered:
            events.publish(.invitationAnswered(by: data.player, game: data.game, response: data.response, at: event.at))
        case .invitationExpired:
            events.publish(.invitationExpired(game: data.game, at: event.at))
        case .gameStarted:
            let plan = [data.participants.map { $0.joined(separator: " vs ") },
                        data.rounds.map { $0.sorted { $0.n < $1.n }.map(\.game.rawValue).joined(separator: ", ") }].compactMap { $0 }
            events.publish(.gameStarted(game: data.game, plan: plan.isEmpty ? nil : plan.joined(separator: ": "), at: event.at))
            if let game = data.game, let rounds = data.rounds {
                do {
                    try store.savePlan(game: game, rounds: rounds)
                } catch {
                    logger.warning("could not store the plan of game \(game): \(error)")
                }
            }
            if let game = data.game {
                let start = onGameStarted
                children.spawn { await start(game) }
            }
        case .gameCancelled:
            events.publish(.gameCancelled(game: data.game, at: event.at))
        case .roundFinished:
            events.publish(.roundFinished(game: data.game, round: data.round, scores: data.scores, winner: data.winner, at: event.at))
        case .gameFinished:
            events.publish(.gameFinished(game: data.game, winner: data.winner, at: event.at))
        case .unlocked:
            events.publish(.unlocked(player: data.player, persistent: data.persistent, at: event.at))
        case .unlockLost:
            events.publish(.unlockLost(player: data.player, at: event.at))
        case .achievementUnlocked:
            events.publish(.achievement(title: data.title ?? data.achievement, at: event.at))
        case .tournamentFinished:
            events.publish(.tournamentFinished(tournament: data.tournament, winner: data.winner, at: event.at))
        case .peerReading:
            guard let nearby, let player = data.player, let rssi = data.rssi, let power = data.measuredPower else { return }
            let variance = data.rssiVariance, at = min(event.at, clock.now)
            children.spawn { await nearby.receivePeerReading(from: player, rssi: rssi, measuredPower: power, variance: variance, at: at) }
        default:
            logger.debug("ignoring lobby event \(event.kind)")
        }
    }
}
