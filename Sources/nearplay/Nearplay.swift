import ArgumentParser

@main
struct Nearplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearplay",
        abstract: "Find players nearby over Bluetooth LE and challenge them to sensor minigames.",
        version: NearplayVersion.current,
        subcommands: [
            ReplayCommand.self,
            EvalCommand.self,
            SimulateCommand.self,
            DecodeCommand.self,
            SensorsCommand.self,
            Calibrate.self,
            PracticeCommand.self,
            AdaptersCommand.self,
            ScanCommand.self,
            AdvertiseCommand.self,
            RecordCommand.self,
            LobbyCommand.self,
        ]
    )
}
