import ArgumentParser

/// `nearplay-lobby`: the lobby server and its tools, run as `nearplay lobby …`.
///
/// The server is an executable of its own so that the agent on a device does not load
/// Hummingbird, SwiftNIO and GRDB it never uses (about 3.5 MB of resident memory for
/// `nearplay scan`); `nearplay lobby` hands its arguments over to it.
@main
struct NearplayLobby: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearplay lobby",
        abstract: "Run the lobby server that holds players, invitations, games and rewards.",
        subcommands: [LobbyServe.self, LobbySeed.self, LobbyFlags.self, LobbyMigrate.self]
    )
}
