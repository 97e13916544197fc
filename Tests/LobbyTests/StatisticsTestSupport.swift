import Foundation
import LobbyDatabase
@testable import Lobby

extension TestLobby {
    /// A store whose games have one round, so a result costs three requests.
    static func oneRound() async throws -> TestLobby { try await TestLobby { $0.roundsPerGame = 1 } }

    /// Plays a one-round game that `winner` wins 900 to 100 (or a 500–500 draw), finished by the
    /// winner's submission; returns that submission's receipt.
    @discardableResult
    func play(_ winner: (id: Int64, name: String), beats loser: (id: Int64, name: String), draw: Bool = false, key: String) async throws -> ScoreReceipt {
        let game = try await openGame(winner.id, with: [(loser.id, loser.name)])
        try await submit(loser.id, game: game, round: 1, score: draw ? 500 : 100, key: "\(key)-l")
        return try await submit(winner.id, game: game, round: 1, score: draw ? 500 : 900, key: "\(key)-w")
    }

    /// Moves the manual clock to `date` (which must not be in its past).
    func move(to date: Date) {
        clock.advance(by: date.timeIntervalSince(clock.now()))
    }

    /// `2027-10-31T22:30:00Z` as a date.
    static func instant(_ text: String) -> Date {
        try! Date(text, strategy: .iso8601)
    }

    func setZone(_ player: Int64, _ zone: String, country: String? = nil) async throws {
        _ = try await store.updateSettings(player, PlayerSettings(timeZone: zone, country: country))
    }

    /// Rows of `table` in the store.
    func count(_ table: String, _ filter: String = "1 = 1", _ arguments: [any SQLValueConvertible] = []) async throws -> Int {
        try await store.database.read { [arguments = arguments.map(\.sqlValue)] db in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM \(table) WHERE \(filter)", arguments) ?? 0
        }
    }
}
