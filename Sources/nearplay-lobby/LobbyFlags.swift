import ArgumentParser
import Foundation
import Lobby

/// `nearplay lobby flags`: players whose scores look made up, and clearing them.
struct LobbyFlags: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flags",
        abstract: "List players whose score history was flagged as made up, or clear one.",
        discussion: """
            The lobby flags a player when its history looks scripted: at the ceiling of every game, or \
            recordings without a real sensor's fingerprint. A flagged player's tournament rewards are held, \
            not lost: clearing it gives them. Works on the lobby's database file, with the server running or not.
            """,
        subcommands: [List.self, Clear.self],
        defaultSubcommand: List.self
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List flagged players: why, since when, and the tournaments whose rewards are held.")

        @Option(help: "The lobby's SQLite database file, or its postgres:// URL.")
        var db = "./nearplay-lobby.sqlite"

        @Flag(help: "One JSON object per player.")
        var json = false

        func run() async throws {
            let store = try await LobbyStore.open(db)
            defer { try? store.close() }
            let players = try await store.flaggedPlayers()
            if json {
                for player in players {
                    let object: [String: Any] = [
                        "username": player.username,
                        "held_tournaments": player.heldTournaments,
                        "flags": player.flags.map {
                            ["reason": $0.reason.rawValue, "details": $0.details,
                             "flagged_at": $0.flaggedAt.formatted(Date.ISO8601FormatStyle())]
                        },
                    ]
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    print(String(decoding: data, as: UTF8.self))
                }
                return
            }
            guard !players.isEmpty else {
                print("No player is flagged.")
                return
            }
            for player in players {
                let held = player.heldTournaments.isEmpty ? "no rewards held"
                    : "rewards held from tournaments \(player.heldTournaments.map(String.init).joined(separator: ", "))"
                print("\(player.username): \(held)")
                for flag in player.flags {
                    print("  \(flag.reason.rawValue) since \(flag.flaggedAt.formatted(Date.ISO8601FormatStyle())): \(flag.details)")
                }
            }
            print("Clear a player whose scores you found genuine with `nearplay lobby flags clear USERNAME --db \(db)`.")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a player's flags and give it the tournament rewards held from it.")

        @Argument(help: "The flagged player's username.")
        var username: String

        @Option(help: "The lobby's SQLite database file, or its postgres:// URL.")
        var db = "./nearplay-lobby.sqlite"

        @Option(help: "Who clears it, for the record.")
        var by = ProcessInfo.processInfo.environment["USER"] ?? "operator"

        func run() async throws {
            let store = try await LobbyStore.open(db)
            defer { try? store.close() }
            do {
                let clearance = try await store.clearFlags(username: username, by: by)
                let released = clearance.releasedTournaments.isEmpty ? "no rewards were held"
                    : "gave it the rewards of tournaments \(clearance.releasedTournaments.map(String.init).joined(separator: ", "))"
                print("Cleared \(clearance.username) (\(clearance.cleared.map(\.rawValue).joined(separator: ", "))); \(released).")
            } catch let error as LobbyError {
                throw ValidationError(error.message)
            }
        }
    }
}
