import BeaconKeys
import struct BeaconFrames.SplitMix64
import Foundation
import LobbyDatabase
import Minigames

// What the benchmarks need from the store's insides (its transactions, records and identity
// tables), as SPI: not part of Lobby's API, seen only by a `@_spi(Benchmarks) import Lobby`.
// Written here rather than in the benchmarks because each needs types the module keeps internal,
// and a benchmark that rebuilt them would measure its own copy instead of the store's code.

extension LobbyStore {
    /// Builds the identity table of one rotation period from every player's secret, as the
    /// store does ahead of each period, and returns the table's size (for benchmarks; the
    /// store's own tables are left alone).
    @_spi(Benchmarks)
    public func benchmarkBuildIdentityTable(period: Int64) async throws -> Int {
        let secrets = try await read { db, _ in
            try db.fetchAll("SELECT beaconSecret FROM player WHERE beaconSecret IS NOT NULL AND deletedAt IS NULL").map { try $0.get(0, as: Data.self) }
        }.compactMap { BeaconSecret(bytes: Array($0)) }
        var table = IdentityDirectory.Table()
        for (index, secret) in secrets.enumerated() { table.insert(IdentityDirectory.value(.player, secret, period: period), Int64(index)) }
        return table.single.count + table.shared.values.reduce(0) { $0 + $1.count }
    }

    /// Players and locations whose identities the store resolves, and the tables it holds now.
    @_spi(Benchmarks)
    public var identityCensus: (players: Int, locations: Int, tables: Int) { identities.census }

    /// Opens `count` one-round games of `minigame` (`duration` seconds) between random pairs of
    /// `players` in which the second player has already scored, for a benchmark to finish with the
    /// first player's score.
    @_spi(Benchmarks)
    public func benchmarkOpenGames(
        count: Int, among players: [Int64], minigame: MinigameName, duration: Double, seed: UInt64
    ) async throws -> [(game: Int64, player: Int64)] {
        try await write { context in
            var random = SplitMix64(seed: seed)
            var games: [(game: Int64, player: Int64)] = []
            for _ in 0..<count {
                let first = Int(random.next() % UInt64(players.count))
                var second = Int(random.next() % UInt64(players.count - 1))
                if second >= first { second += 1 }
                let (a, b) = (players[first], players[second])
                var game = GameRecord(id: nil, inviterId: a, state: .open, createdAt: context.now,
                                      expiresAt: context.now.addingTimeInterval(86400), openedAt: context.now)
                try game.insertRow(context.db)
                let id = game.id!
                try MembershipRecord(gameId: id, playerId: a, role: .inviter, response: .accepted, respondedAt: context.now).insertRow(context.db)
                try MembershipRecord(gameId: id, playerId: b, role: .invitee, response: .accepted, respondedAt: context.now).insertRow(context.db)
                try RoundRecord(gameId: id, n: 1, minigame: minigame, duration: duration, signalTime: nil).insertRow(context.db)
                try ScoreRecord(gameId: id, n: 1, playerId: b, score: 500, key: "bench-opponent", submittedAt: context.now).insertRow(context.db)
                games.append((id, a))
            }
            return games
        }
    }
}

extension LobbyStore {
    /// Commits `count` `peerReading` events for `player` in one transaction (players named
    /// `p<n>` from `startingAt`), pushed to its live clients as any event: for the event flood
    /// benchmark.
    @_spi(Benchmarks)
    public func benchmarkRecordEvents(for player: Int64, count: Int, startingAt first: Int) async throws {
        try await write { context in
            for n in first..<(first + count) {
                try context.record(.peerReading, for: player, EventData(player: "p\(n)", rssi: -60, measuredPower: -59))
            }
        }
    }
}
