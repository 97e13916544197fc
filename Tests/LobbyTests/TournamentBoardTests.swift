import Foundation
import Testing
@testable import Lobby

/// Boards by location and by tournament, and the tournament win achievement the closing grants.
@Suite struct TournamentBoardTests {
    @Test func tournamentAndLocationBoardsAndTheWinnersAchievement() async throws {
        let lobby = try await TestLobby { $0.roundsPerGame = 2 }
        let owner = try await lobby.player("owner").id
        let ids = try await lobby.players("alice", "bob", "carol", "dave")
        let (alice, bob, carol, dave) = (ids[0], ids[1], ids[2], ids[3])
        let hall = try await lobby.store.registerLocation(owner, name: "Hall").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        for player in [alice, bob, carol, dave] {
            try await lobby.see(player, location: hall)
            _ = try await lobby.store.joinTournament(player, tournament: daily.id)
        }
        try await lobby.submit(alice, tournament: daily.id, round: 1, score: 500, key: "a1")
        try await lobby.submit(alice, tournament: daily.id, round: 2, score: 400, key: "a2")
        try await lobby.submit(bob, tournament: daily.id, round: 1, score: 700, key: "b1")
        try await lobby.submit(carol, tournament: daily.id, round: 1, score: 450, key: "c1")
        try await lobby.submit(carol, tournament: daily.id, round: 2, score: 450, key: "c2")
        // Dave joined but played nothing: not on the boards.

        let board = try await lobby.store.leaderboard(viewer: bob, board: try BoardKind(parsing: "tournament:\(daily.id)"))
        #expect(board.board == "tournament:\(daily.id)")
        #expect(board.entries.map { "\($0.rank) \($0.username) \($0.points)" } == ["1 alice 900", "1 carol 900", "3 bob 700"])
        #expect(board.participants == 3)
        #expect(board.me?.rank == 3)
        #expect(board.ahead?.username == "carol")
        let place = try await lobby.store.leaderboard(viewer: dave, board: .location(hall.id))
        #expect(place.entries.map(\.points) == [900, 900, 700])
        #expect(place.me == nil)
        let missing = await #expect(throws: LobbyError.self) { _ = try await lobby.store.leaderboard(viewer: dave, board: .tournament(999)) }
        #expect(missing?.code == .tournamentNotFound)
        let nowhere = await #expect(throws: LobbyError.self) { _ = try await lobby.store.leaderboard(viewer: dave, board: .location(999)) }
        #expect(nowhere?.code == .locationNotFound)
        #expect(throws: LobbyError.self) { _ = try BoardKind(parsing: "tournament:0") }
        #expect(throws: LobbyError.self) { _ = try BoardKind(parsing: "arena:3") }

        // Closing names Alice (she reached 900 first) and grants her the tournament win, once.
        lobby.clock.advance(by: daily.endsAt.timeIntervalSince(lobby.clock.now()) + 1)
        _ = try await lobby.store.settleTournaments()
        let progress = try await lobby.store.achievements(alice).first { $0.achievement == "tournamentWin" }
        #expect(progress?.value == 1)
        #expect(progress?.tiers.first?.grantedAt != nil)
        let events = try await lobby.store.events(alice, after: 0)
        #expect(events.filter { $0.kind == .achievementUnlocked }.map(\.data.achievement) == ["tournamentWin"])
        #expect(try await lobby.store.achievements(carol).first { $0.achievement == "tournamentWin" }?.value == 0)
    }
}
