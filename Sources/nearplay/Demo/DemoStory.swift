import Agent
import Foundation
import LobbyClient
import Radio
import Ranging

/// What the demo's agents have said so far, from their event streams.
final class DemoState: @unchecked Sendable {
    private let lock = NSLock()
    private var distances: [String: [String: Double]] = [:]
    private var invitations: [String: [Int64]] = [:]
    private var finished: [String: AgentEvent] = [:]
    private var roundsFinished: [String: Set<Int>] = [:]

    func take(_ event: AgentEvent, at agent: String) {
        lock.withLock {
            switch event.kind {
            case .playerNearby, .playerMoved:
                if let player = event.player, let distance = event.distance { distances[agent, default: [:]][player] = distance }
            case .playerGone:
                if let player = event.player { distances[agent]?[player] = nil }
            case .invitationReceived:
                if let game = event.game { invitations[agent, default: []].append(game) }
            case .roundFinished:
                if let round = event.round { roundsFinished[agent, default: []].insert(round) }
            case .gameFinished:
                finished[agent] = event
            default:
                break
            }
        }
    }

    func distance(of player: String, seenBy agent: String) -> Double? { lock.withLock { distances[agent]?[player] } }
    func invitation(for agent: String) -> Int64? { lock.withLock { invitations[agent]?.last } }
    func roundsFinished(at agent: String) -> Int { lock.withLock { roundsFinished[agent]?.count ?? 0 } }
    func gameFinished(at agent: String) -> AgentEvent? { lock.withLock { finished[agent] } }
    func view(of agent: String) -> [String: Double] { lock.withLock { distances[agent] ?? [:] } }
}

/// The narrated timeline: every line stamped with the seconds since the demo began.
struct Narrator: Sendable {
    let start: ContinuousClock.Instant
    let json: Bool
    let names: [String: String]

    func say(_ text: String) {
        guard !json else { return }
        StandardOutput.line(String(format: "%5.1f s  ", start.duration(to: .now).inSeconds) + text)
        StandardOutput.flush()
    }

    /// One event as the story tells it; nil for events the timeline leaves out.
    func line(for event: AgentEvent, at agent: String) -> String? {
        let me = names[agent] ?? agent
        let who = event.player.map { names[$0] ?? $0 } ?? "someone"
        switch event.kind {
        case .playerNearby:
            return "\(me)'s agent: \(who) is nearby, \(distanceText(event)) (\(event.zone ?? "?"))"
        case .playerMoved:
            return "\(me)'s agent: \(who) is now \(distanceText(event)) away (\(event.zone ?? "?"))"
        case .playerGone:
            return "\(me)'s agent: \(who) is gone"
        case .invitationReceived:
            return "\(me)'s agent: \(who) invites \(me) to game \(event.game.map(String.init) ?? "?")"
        case .gameStarted where agent == "alice":
            return "the lobby: game \(event.game.map(String.init) ?? "?") starts" + (event.message.map { " (\($0))" } ?? "")
        case .roundFinished where agent == "alice":
            let scores = (event.scores ?? [:]).sorted { $0.key < $1.key }.map { "\(names[$0.key] ?? $0.key) \($0.value)" }.joined(separator: ", ")
            return "the lobby verified round \(event.round ?? 0): \(scores)" + (event.winner.map { ", \(names[$0] ?? $0) wins it" } ?? ", a tie")
        case .gameFinished where agent == "alice":
            return "the lobby: game \(event.game.map(String.init) ?? "?") is over, " + (event.winner.map { "\(names[$0] ?? $0) wins" } ?? "a draw")
        case .unlocked:
            return "\(me)'s agent: \(who)'s contact unlocked" + (event.persistent == true ? " for good" : "")
        case .refused:
            return "\(me)'s agent: the lobby refused \(event.operation ?? "an operation"): \(event.message ?? "")"
        default:
            return nil
        }
    }

    private func distanceText(_ event: AgentEvent) -> String {
        event.distance.map { DistanceText.estimate($0, low: event.distanceLow, high: event.distanceHigh) } ?? "distance unknown"
    }

    /// A one-line radar of what `agent` sees: each player placed on a 0–15 m scale.
    func radar(_ view: [String: Double], of agent: String) -> String {
        let width = 30
        var cells = Array(repeating: Character("·"), count: width + 1)
        cells[0] = "◉"
        var labels: [String] = []
        for (player, distance) in view.sorted(by: { $0.value < $1.value }) {
            let position = max(1, min(width, Int((distance / 15 * Double(width)).rounded())))
            let initial = (names[player] ?? player).first ?? "?"
            cells[position] = initial
            labels.append("\(names[player] ?? player) \(String(format: "%.1f m", distance))")
        }
        return "radar (\(names[agent] ?? agent)): " + String(cells) + "  " + labels.joined(separator: ", ")
    }
}

/// The demo's story, told by driving the agents through their local API as the CLI would.
struct DemoStory {
    let world: DemoWorld
    let sockets: [String: String]
    let state: DemoState
    let narrator: Narrator
    let speed: Double

    func client(_ player: String) -> AgentClient { AgentClient(path: sockets[player]!) }

    /// Waits for `condition`, up to `seconds` of story time.
    func waitFor(_ what: String, seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds / speed)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw CommandFailure("The demo gave up waiting for \(what). Alice's agent said:\n\(world.log(of: "alice"))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func pause(_ seconds: Double) async throws { try await Task.sleep(for: .seconds(seconds / speed)) }

    func run() async throws {
        narrator.say("Alice walks towards Bob; Carol stands at the side.")
        try await waitFor("Alice to come near Bob", seconds: 40) { (state.distance(of: "bob", seenBy: "alice") ?? .infinity) < 2.5 }
        narrator.say("Alice's agent: Bob is near (`nearplay nearby` shows him with his name and distance).")
        try await pause(0.5)

        narrator.say("Alice: `nearplay invite bob`")
        let invitation: Invitation
        do {
            invitation = try LobbyClient.decoder.decode(Invitation.self, from: try await client("alice").request(.invite(players: ["bob"])))
        } catch let error as AgentError {
            throw CommandFailure("Alice's invitation failed: \(error.message)")
        }
        try await waitFor("Bob's agent to receive the invitation", seconds: 20) { state.invitation(for: "bob") == invitation.id }
        try await pause(0.5)
        narrator.say("Bob: `nearplay accept \(invitation.id)`")
        do {
            _ = try await client("bob").request(.accept(invitation: invitation.id))
        } catch {
            throw CommandFailure("Bob could not accept: \(error.message)")
        }

        for round in 1...3 {
            try await pause(0.3)
            async let alicePlays = client("alice").request(.play(game: invitation.id), timeout: 120)
            async let bobPlays = client("bob").request(.play(game: invitation.id), timeout: 120)
            let reports: [RoundReport]
            do {
                reports = try [await alicePlays, await bobPlays].map { try LobbyClient.decoder.decode(RoundReport.self, from: $0) }
            } catch let error as AgentError {
                throw CommandFailure("Round \(round) could not be played: \(error.message)")
            }
            let minigame = reports.first?.minigame.rawValue ?? "?"
            narrator.say("round \(round), \(minigame): both play from recorded sensors — Alice scores \(reports[0].score), Bob \(reports[1].score); the scores go to the lobby with their recordings")
            try await waitFor("the lobby to verify round \(round)", seconds: 20) { state.roundsFinished(at: "alice") >= round }
        }
        try await waitFor("the end of the game", seconds: 20) { state.gameFinished(at: "alice") != nil }
        try await pause(0.3)
        for player in ["alice", "bob"] {
            let unlocked = (try? LobbyClient.decoder.decode([UnlockedPlayer].self, from: try await client(player).request(.unlocked))) ?? []
            let names = unlocked.map { (narrator.names[$0.username] ?? $0.username) + ($0.persistent ? " (for good)" : "") }
            narrator.say("\(narrator.names[player] ?? player) has unlocked: " + (names.isEmpty ? "nobody yet" : names.joined(separator: ", ")))
        }
    }
}
