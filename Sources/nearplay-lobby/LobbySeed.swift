import ArgumentParser
import Foundation
import Lobby

/// `nearplay lobby seed`: synthetic players for load tests and demos.
struct LobbySeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Fill a lobby database with synthetic players, sessions and games for a load test.",
        discussion: """
            Writes a plan for Benchmarks/lobby-load.lua: tokens, beacons, invitations to \
            answer, games to score in. Run it on a fresh database before starting the server.
            """
    )

    @Option(help: "The SQLite database file to fill (or a postgres:// URL).")
    var db: String

    @Option(help: "Invitations sent during the run (also sizes answers, scores and statistics).")
    var operations = 20000

    @Option(help: "Where to write the request plan (text, one item a line).")
    var plan: String

    @Option(help: "Then add a past: players up to this number (0: none), all with finished games.")
    var historyPlayers = 0

    @Option(help: "Results (two per finished game) the past holds, spread over the last 90 days.")
    var historyResults = 0

    func run() async throws {
        let store = try await LobbyStore.open(db)
        let seeded = try await LobbySeeder(store: store).seed(operations: operations)
        if historyPlayers > 0 || historyResults > 0 {
            let history = try await HistorySeeder(store: store).seed(players: historyPlayers, results: historyResults)
            print("added a past: \(history.players) players, \(history.results) results")
        }
        try store.close()
        try seeded.text().write(toFile: plan, atomically: true, encoding: .utf8)
        print("seeded \(seeded.tokens.count) players; plan in \(plan)")
    }
}
