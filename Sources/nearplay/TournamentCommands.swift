import Agent
import ArgumentParser
import Foundation
import LobbyClient

struct TournamentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tournaments", abstract: "The tournaments running at the multiplayer locations near you (or at one location).")
    @OptionGroup var agent: AgentConnection
    @Option(help: ArgumentHelp("A location's id, near or not (see `nearplay nearby`).", valueName: "id")) var location: Int64?

    func validate() throws {
        if let location, location <= 0 { throw ValidationError("--location takes a location's id, a positive whole number.") }
    }

    func run() throws {
        try agent.send(.tournaments(location: location), as: [NearbyLocation].self) { locations in
            guard !locations.isEmpty else {
                return print("No multiplayer location is near: tournaments are joined where they run (or name one with --location ID).")
            }
            for place in locations {
                let distance = place.distance.map { String(format: ", %.1f m away", $0) } ?? ""
                print("\(place.name) (location \(place.id)\(distance))")
                let running = place.tournaments.filter { $0.state == .open }
                if running.isEmpty { print("  no tournament running") }
                for tournament in running {
                    let ends = tournament.endsAt.formatted(date: .abbreviated, time: .shortened)
                    let entries = "\(tournament.entries) \(tournament.entries == 1 ? "entry" : "entries")"
                    print("  \(pad(String(tournament.id), 6))  \(pad(tournament.period.rawValue, 8))  until \(ends)  \(tournament.minigames.map(\.rawValue).joined(separator: ", "))  \(entries)")
                }
            }
            print("Join one with `nearplay join ID` while you are there.")
        }
    }
}

struct JoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Join a tournament at a location you are at, and play its rounds on the agent's sensors.")
    @OptionGroup var agent: AgentConnection
    @Argument(help: "The tournament's id (see `nearplay tournaments`).") var tournament: Int64

    func validate() throws {
        guard tournament > 0 else { throw ValidationError("TOURNAMENT is a tournament's id, a positive whole number.") }
    }

    func run() throws {
        // The agent plays the rounds; show what to do as each starts.
        let tournament = tournament
        agent.showRoundsStarting(once: false) { $0.tournament == tournament }
        try agent.send(.join(tournament: tournament), as: TournamentReport.self, timeout: 900) { report in
            for round in report.played {
                print("Round \(round.round) (\(round.minigame)): \(round.score) points, submitted.")
            }
            let left = report.entry.rounds.filter { $0.score == nil }.count - report.played.count
            if report.played.isEmpty && left <= 0 {
                print("You have played every round of tournament \(report.tournament); your total is \(report.entry.total).")
            } else {
                let ends = report.entry.endsAt.formatted(date: .abbreviated, time: .shortened)
                print("Tournament \(report.tournament): the best total when it closes (\(ends)) wins every entrant's unlocked players.")
            }
        }
    }
}
