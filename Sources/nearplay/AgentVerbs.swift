import Agent
import ArgumentParser
import Foundation
import LobbyClient
import Ranging

/// Options of every command that talks to a running agent.
struct AgentConnection: ParsableArguments {
    @Option(help: ArgumentHelp("The agent's socket (default $XDG_RUNTIME_DIR/nearplay/agent.sock).", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    var client: AgentClient { AgentClient(path: socket ?? AgentPaths().socket) }

    /// Sends `request`; prints the JSON with --json, else hands the decoded answer to `show`.
    func send<Answer: Decodable>(_ request: AgentRequest, as: Answer.Type, timeout: Double = 60, show: (Answer) -> Void) throws {
        let data: Data
        do {
            data = try client.send(request, timeout: timeout)
        } catch {
            throw CommandFailure(error.message)
        }
        if json {
            print(String(decoding: data, as: UTF8.self))
            return
        }
        if let queued = try? JSONDecoder().decode(QueuedOperation.self, from: data), queued.queued {
            print("The lobby cannot be reached: the \(queued.operation) waits in the queue and will be sent when it is back.")
            return
        }
        do {
            show(try LobbyClient.decoder.decode(Answer.self, from: data))
        } catch {
            throw CommandFailure("The agent's answer was not understood (\(error)); try --json.")
        }
    }
}

extension AgentConnection {
    /// Unless printing JSON, prints each `round_starting` event that `matches` (the first only,
    /// with `once`) as the agent announces it, from a thread of its own.
    func showRoundsStarting(once: Bool, matching matches: @escaping @Sendable (AgentEvent) -> Bool) {
        guard !json else { return }
        let client = client
        Thread.detachNewThread {
            try? client.events { line in
                guard let event = try? LobbyClient.decoder.decode(AgentEvent.self, from: Data(line.utf8)),
                      case .roundStarting(_, let round, let minigame, let instructions, _) = event, matches(event) else { return true }
                print("Round \(round), \(minigame.rawValue.capitalized): \(instructions) — go!")
                StandardOutput.flush()
                return !once
            }
        }
    }
}

/// A generic JSON value, for answers printed as they come.
struct Anything: Decodable {}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show what the running agent is doing.")
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.status, as: AgentStatus.self) { status in
            print("\(status.username) (\(status.beacon)) on \(status.radio); lobby \(status.lobby); \(status.queued) queued; event cursor \(status.eventCursor)")
            if let model = status.distanceModel {
                print("ranging: \(model)" + (status.rangingSite.map { ", the site profile of \($0)" } ?? ""))
            }
        }
    }
}

struct NearbyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby", abstract: "Who is near (name, distance, zone, unlocked or not), and the multiplayer locations in range.")
    @OptionGroup var agent: AgentConnection

    @Flag(help: "With --json, print the locations in range instead of the players.")
    var locations = false

    func run() throws {
        if agent.json && locations { return try agent.send(.locations, as: [NearbyLocation].self) { _ in } }
        try agent.send(.nearby, as: [NearbyPlayer].self) { players in
            if players.isEmpty { print("Nobody you can play with is near.") }
            for player in players {
                let distance = player.distance.map {
                    pad(DistanceText.estimate($0, low: player.distanceLow, high: player.distanceHigh), 18)
                } ?? pad("    ? m", 18)
                let unlocked = player.unlocked.map { $0 ? "unlocked" : "" } ?? ""
                print("\(pad(player.username, 16))  \(pad(player.name, 24))  \(distance)  \(pad(player.zone, 9))  \(unlocked)")
            }
        }
        guard !agent.json else { return }
        try agent.send(.locations, as: [NearbyLocation].self) { places in
            for place in places {
                let distance = place.distance.map { String(format: "%5.1f m", $0) } ?? "    ? m"
                let running = place.tournaments.filter { $0.state == .open }.count
                print("\(pad("location \(place.id)", 16))  \(pad(place.name, 24))  \(distance)  \(pad(place.zone, 9))  \(running) tournaments (`nearplay tournaments`)")
            }
        }
    }
}

struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "invite", abstract: "Invite players nearby to a game.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The players to invite, by username.") var players: [String]

    func validate() throws {
        guard (1...20).contains(players.count) else { throw ValidationError("Name 1 to 20 players to invite.") }
    }

    func run() throws {
        try agent.send(.invite(players: players), as: Invitation.self) { invitation in
            print("Invitation \(invitation.id) sent to \(invitation.invitees.map(\.username).joined(separator: ", ")).")
            for left in invitation.excluded { print("  \(left.username) left out: \(left.reason.rawValue)") }
        }
    }
}

struct InvitationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "invitations", abstract: "Invitations you sent or received that wait for answers.")
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.invitations, as: [Invitation].self) { invitations in
            guard !invitations.isEmpty else { return print("No invitations wait.") }
            for invitation in invitations {
                let answers = invitation.invitees.map { "\($0.username) \($0.response.rawValue)" }.joined(separator: ", ")
                print("\(invitation.id)  from \(invitation.inviter)  \(answers)")
            }
        }
    }
}

struct AcceptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accept", abstract: "Accept an invitation.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The invitation's id.") var id: Int64

    func run() throws {
        try agent.send(.accept(invitation: id), as: Invitation.self) { invitation in
            print("Accepted invitation \(invitation.id) from \(invitation.inviter); the game is \(invitation.state).")
        }
    }
}

struct DeclineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decline", abstract: "Decline an invitation.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The invitation's id.") var id: Int64

    func run() throws {
        try agent.send(.decline(invitation: id), as: Invitation.self) { invitation in
            print("Declined invitation \(invitation.id) from \(invitation.inviter).")
        }
    }
}

struct GamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "games", abstract: "Your games and their rounds.")
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.games, as: [LobbyGame].self) { games in
            guard !games.isEmpty else { return print("No games yet: invite someone nearby.") }
            for game in games {
                let rounds = game.rounds.map { round in
                    "\(round.n) \(round.game.rawValue) [" + round.scores.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + "]"
                }.joined(separator: "; ")
                print("\(game.id)  \(pad(game.state.rawValue, 9))  \(game.participants.joined(separator: " vs "))  \(rounds)" + (game.winner.map { "  won by \($0)" } ?? ""))
            }
        }
    }
}

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play", abstract: "Play your next round of a game on the agent's sensors and submit it.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The game's id.") var game: Int64

    func run() throws {
        // The agent plays the round; show what to do as it starts.
        let game = game
        agent.showRoundsStarting(once: true) { $0.game == game }
        try agent.send(.play(game: game), as: RoundReport.self, timeout: 120) { report in
            print("Round \(report.round) of game \(report.game) (\(report.minigame)): \(report.score) points, submitted.")
        }
    }
}

struct UnlockedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlocked", abstract: "The players whose contacts you have unlocked.")
    @OptionGroup var agent: AgentConnection

    func run() throws {
        try agent.send(.unlocked, as: [UnlockedPlayer].self) { players in
            guard !players.isEmpty else { return print("Nobody unlocked yet: win a game.") }
            for player in players { print(player.username + (player.persistent ? "  (for good)" : "")) }
        }
    }
}

struct BlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "block", abstract: "Block a player: they no longer see you, nor you them.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The player's username.") var player: String

    func run() throws {
        try agent.send(.block(player: player), as: Anything.self) { _ in print("Blocked \(player).") }
    }
}

struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Everything the agent sees, as it happens (JSON Lines with --json).")
    @OptionGroup var agent: AgentConnection

    @Option(help: ArgumentHelp("First show this many of the agent's past events (at most \(AgentEventBus.historyLimit)).", valueName: "n"))
    var recent: Int = 0

    func validate() throws {
        guard (0...AgentEventBus.historyLimit).contains(recent) else {
            throw ValidationError("--recent takes 0 to \(AgentEventBus.historyLimit) events, not \(recent).")
        }
    }

    func run() throws {
        let decoder = JSONDecoder()
        do {
            try agent.client.events(recent: recent) { line in
                if agent.json {
                    print(line)
                } else if let event = try? decoder.decode(AgentEvent.self, from: Data(line.utf8)) {
                    print(event.time.formatted(date: .omitted, time: .standard) + "  " + event.sentence)
                }
                StandardOutput.flush()
                return true
            }
        } catch {
            throw CommandFailure(error.message)
        }
    }
}
