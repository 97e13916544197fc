import ArgumentParser

@main
struct Nearplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearplay",
        abstract: "Find players nearby over Bluetooth LE and challenge them to sensor minigames.",
        version: NearplayVersion.current,
        groupedSubcommands: [
            CommandGroup(name: "Demo", subcommands: [DemoCommand.self]),
            CommandGroup(name: "Player", subcommands: [
                AgentCommand.self, RegisterCommand.self, LoginCommand.self, StatusCommand.self, NearbyCommand.self,
                InviteCommand.self, InvitationsCommand.self, AcceptCommand.self, DeclineCommand.self, GamesCommand.self,
                PlayCommand.self, StatsCommand.self, LeaderboardCommand.self, AchievementsCommand.self, UnlockedCommand.self,
                BlockCommand.self, TournamentsCommand.self, JoinCommand.self, EventsCommand.self, MetricsCommand.self,
            ]),
            CommandGroup(name: "Sensor", subcommands: [SensorsCommand.self, Calibrate.self, PracticeCommand.self]),
            CommandGroup(name: "Radio", subcommands: [
                AdaptersCommand.self, ScanCommand.self, AdvertiseCommand.self, RecordCommand.self, AirCommand.self,
            ]),
            CommandGroup(name: "Trace", subcommands: [ReplayCommand.self, EvalCommand.self, SimulateCommand.self, DecodeCommand.self]),
            CommandGroup(name: "Server", subcommands: [LobbyCommand.self, BeaconCommand.self]),
        ]
    )
}
