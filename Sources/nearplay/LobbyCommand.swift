import ArgumentParser

/// `nearplay lobby …`: the lobby server and its tools.
struct LobbyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lobby",
        abstract: "Run the lobby server that holds players, invitations, games and rewards.",
        subcommands: [LobbyServe.self, LobbySeed.self]
    )
}
