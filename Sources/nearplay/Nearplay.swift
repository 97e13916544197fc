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
            DemoCommand.self,
            AgentCommand.self,
            RegisterCommand.self,
            LoginCommand.self,
            StatusCommand.self,
            NearbyCommand.self,
            InviteCommand.self,
            InvitationsCommand.self,
            AcceptCommand.self,
            DeclineCommand.self,
            GamesCommand.self,
            PlayCommand.self,
            StatsCommand.self,
            UnlockedCommand.self,
            BlockCommand.self,
            EventsCommand.self,
            AirCommand.self,
        ]
    )
}
