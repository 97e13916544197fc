import ArgumentParser

@main
struct Nearplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearplay",
        abstract: "Find players nearby over Bluetooth LE and challenge them to sensor minigames.",
        subcommands: [
            LobbyCommand.self,
        ]
    )
}
