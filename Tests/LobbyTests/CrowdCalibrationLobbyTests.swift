import BeaconFrames
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Calibration from the crowd through the store: players report readings of each other, the
/// lobby pairs them into exchanges, solves and publishes each player's offsets and each
/// location's exponent.
@Suite struct CrowdCalibrationLobbyTests {
    /// Players in a room with known radio offsets, reporting what they read of each other:
    /// `r = P + t_seen + g_reader − 10·n·log10(d) + noise`, P = −59 dBm, n = 2.5, noise 0.5 dB.
    final class Crowd {
        let lobby: TestLobby
        let names: [String]
        var ids: [Int64] = []
        /// The truth: each player's transmit and receive offsets (dB), uniform in ±8.
        let transmitTruth: [Double]
        let receiveTruth: [Double]
        var random: SplitMix64
        /// dB the player at an index adds to its reading of the player at another (a liar).
        var lie: (_ reader: Int, _ seen: Int) -> Double = { _, _ in 0 }

        init(count: Int = 12, seed: UInt64 = 26, _ configure: (inout LobbyConfiguration) -> Void = { _ in }) async throws {
            lobby = try await TestLobby(configure)
            var random = SplitMix64(seed: seed)
            let offsets = (0..<count).map { _ in (16 * random.nextDouble() - 8, 16 * random.nextDouble() - 8) }
            self.random = random
            transmitTruth = offsets.map(\.0)
            receiveTruth = offsets.map(\.1)
            names = (0..<count).map { "player\($0)" }
            for name in names { ids.append(try await lobby.player(name).id) }
        }

        /// One round: everyone in `players` stands somewhere new in a 10 m room and each reports
        /// its reading of each of its `partners` (all the others unless given), at one moment.
        /// The clock then moves on 200 s, past ``LobbyConfiguration/crowdPairSeconds``, so a
        /// round's readings pair only with the same round's.
        func mingle(_ players: [Int]? = nil, partners: ((Int) -> [Int])? = nil) async throws {
            let players = players ?? Array(names.indices)
            var spots: [Int: (Double, Double)] = [:]
            for player in players { spots[player] = (10 * random.nextDouble(), 10 * random.nextDouble()) }
            for player in players { lobby.store.noteActive(ids[player]) }
            let now = lobby.clock.now()
            for reader in players {
                var sightings: [EncounterReport] = []
                for seen in partners?(reader) ?? players where seen != reader {
                    let (a, b) = (spots[reader]!, spots[seen]!)
                    let distance = max(0.5, hypot(a.0 - b.0, a.1 - b.1))
                    let rssi = -59 + transmitTruth[seen] + receiveTruth[reader] - 25 * log10(distance)
                        + 0.5 * random.nextGaussian() + lie(reader, seen)
                    sightings.append(EncounterReport(try await lobby.beacon(of: names[seen]), distance: distance, at: now,
                                                     rssi: min(20, max(-130, rssi)), measuredPower: MeasuredPower(dBm: -59), rssiVariance: 1))
                }
                _ = try await lobby.store.recordEncounters(reporter: ids[reader], sightings)
            }
            lobby.clock.advance(by: 200)
        }

        /// `t − g` of each player, less the mean over `players`: what the exchanges pin.
        static func demeaned(_ values: [Double], _ players: [Int]) -> [Double] {
            let mean = players.map { values[$0] }.reduce(0, +) / Double(players.count)
            return values.map { $0 - mean }
        }

        func offsets(_ player: Int) async throws -> RadioOffsets {
            try await lobby.store.radioOffsets(ids[player])
        }

        func exchangeRows(of player: Int) async throws -> Int {
            let id = ids[player]
            return try await lobby.store.database.read { db in
                try db.fetchValue(Int.self, "SELECT COUNT(*) FROM crowdExchange WHERE firstId = ?1 OR secondId = ?1", id)
            } ?? -1
        }
    }

    /// A solve costs the cube of its players, so players who never met are solved apart and a
    /// crowd larger than `crowdDevicesPerSolve` is cut into groups of neighbours; each group's
    /// players still come out with their `t − g` (relative to their group) within 2 dB.
    @Test func playersWhoNeverMetAndCrowdsTooLargeForOneSolveAreSolvedInGroups() async throws {
        let crowd = try await Crowd(count: 12) { $0.crowdDevicesPerSolve = 4 }
        // Two rooms of six who never meet each other: two connected crowds, each cut in 4 + 2.
        let rooms = [Array(0..<6), Array(6..<12)]
        for _ in 0..<3 { for room in rooms { try await crowd.mingle(room) } }
        let summary = try await crowd.lobby.store.solveCrowdCalibration()
        #expect(summary.players == 12 && summary.groups == 4, "\(summary)")
        // Inside each group of four, 6 pairs; the 2 + 2 left over make 1 pair each; the 8 pairs
        // of each room that crossed its cut are left out.
        #expect(summary.pairs == 2 * (6 + 1), "\(summary)")
        #expect(summary.published == 8, "only the groups of four give anyone 3 partners: \(summary)")
        let groups = LobbyStore.groups(try await crowd.lobby.store.database.read { db in
            try db.fetchAll("SELECT firstId, secondId FROM crowdExchange").map {
                StoredExchange(first: try $0.get(0, as: Int64.self), second: try $0.get(1, as: Int64.self), location: nil,
                               firstHearsSecond: .init(filteredRSSI: -60, measuredPower: -59),
                               secondHearsFirst: .init(filteredRSSI: -60, measuredPower: -59))
            }
        }, maximum: 4)
        #expect(groups.map(\.devices.count).sorted() == [2, 2, 4, 4])
        for group in groups where group.devices.count == 4 {
            let members = group.devices.compactMap { crowd.ids.firstIndex(of: $0) }
            let truth = Crowd.demeaned(zip(crowd.transmitTruth, crowd.receiveTruth).map { $0 - $1 }, members)
            var found = Array(repeating: 0.0, count: crowd.names.count)
            for member in members {
                let offsets = try await crowd.offsets(member)
                found[member] = offsets.transmit - offsets.receive
            }
            let estimated = Crowd.demeaned(found, members)
            for member in members {
                #expect(abs(estimated[member] - truth[member]) < 2, "player \(member): \(estimated[member]) against \(truth[member])")
            }
        }
        // A limit that leaves no one enough partners is refused.
        #expect(throws: LobbyError.self) {
            var configuration = LobbyConfiguration()
            configuration.crowdDevicesPerSolve = 3
            _ = try configuration.validated()
        }
    }

    @Test func publishesEachPlayersTransmitLessReceiveWithinTwoDecibels() async throws {
        let crowd = try await Crowd(count: 13)
        let room = Array(0..<12)
        // Nothing is solved before the first solve.
        let before = await #expect(throws: LobbyError.self) { try await crowd.offsets(0) }
        #expect(before?.code == .radioOffsetsNotSolved && before?.kind == .notFound)
        // Player 12 only ever meets players 0 and 1: two partners, one fewer than published.
        for _ in 0..<3 {
            try await crowd.mingle(room)
            try await crowd.mingle([0, 1, 12])
        }
        let summary = try await crowd.lobby.store.solveCrowdCalibration()
        #expect(summary.players == 13)
        #expect(summary.pairs == 66 + 2)
        #expect(summary.exchanges == 3 * (66 + 3))
        #expect(summary.published == 12)

        var estimated: [Double] = []
        for player in room {
            let offsets = try await crowd.offsets(player)
            #expect(offsets.pairs == (player < 2 ? 12 : 11))
            #expect(offsets.solvedAt == crowd.lobby.clock.now())
            estimated.append(offsets.transmit - offsets.receive)
        }
        let truth = Crowd.demeaned(zip(crowd.transmitTruth, crowd.receiveTruth).map { $0 - $1 }, room)
        let found = Crowd.demeaned(estimated + [0], room)
        for player in room {
            #expect(abs(found[player] - truth[player]) < 2, "player \(player): t − g \(found[player]), truth \(truth[player])")
        }
        // Without that, the answer would be no better than the prior: the truths spread over ±16 dB.
        #expect(truth.prefix(12).map(abs).max()! > 4)

        let loner = await #expect(throws: LobbyError.self) { try await crowd.offsets(12) }
        #expect(loner?.code == .radioOffsetsNotSolved)

        // A resolution shows the player's offsets with its profile.
        let profile = try await crowd.lobby.store.resolve(viewer: crowd.ids[0], beacon: try await crowd.lobby.beacon(of: "player3"))
        #expect(profile.radioOffsets == (try await crowd.offsets(3)))
        let lonerProfile = try await crowd.lobby.store.resolve(viewer: crowd.ids[0], beacon: try await crowd.lobby.beacon(of: "player12"))
        #expect(lonerProfile.radioOffsets == nil)
    }

    @Test func aBlockedPairContributesNothing() async throws {
        let crowd = try await Crowd(count: 5)
        try await crowd.mingle()
        try await crowd.lobby.store.block(crowd.ids[0], username: "player1")
        try await crowd.mingle()
        // Exchanged before the block: kept, but left out of the solve; none recorded after it.
        let (first, second) = (min(crowd.ids[0], crowd.ids[1]), max(crowd.ids[0], crowd.ids[1]))
        let rows = try await crowd.lobby.store.database.read { db in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM crowdExchange WHERE firstId = ? AND secondId = ?", first, second)
        }
        #expect(rows == 1)
        let summary = try await crowd.lobby.store.solveCrowdCalibration()
        #expect(summary.pairs == 10 - 1)
        #expect(try await crowd.offsets(0).pairs == 3)
        #expect(try await crowd.offsets(1).pairs == 3)
        #expect(try await crowd.offsets(2).pairs == 4)
    }

    @Test func deletingAPlayerDeletesItsExchangesAndOffsets() async throws {
        let crowd = try await Crowd(count: 5)
        try await crowd.mingle()
        try await crowd.lobby.store.solveCrowdCalibration()
        #expect(try await crowd.exchangeRows(of: 3) == 4)
        _ = try await crowd.offsets(3)
        try await crowd.lobby.store.deletePlayer(crowd.ids[3])
        #expect(try await crowd.exchangeRows(of: 3) == 0)
        let deleted = crowd.ids[3]
        let offsetRows = try await crowd.lobby.store.database.read { db in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM radioOffsets WHERE playerId = ?", deleted)
        }
        #expect(offsetRows == 0)
        let summary = try await crowd.lobby.store.solveCrowdCalibration()
        #expect(summary.players == 4)
        #expect(try await crowd.offsets(0).pairs == 3)
    }

    @Test func aLocationsCrowdProfileSaysThePriorHoldsItsExponent() async throws {
        let crowd = try await Crowd(count: 6)
        let location = try await crowd.lobby.store.registerLocation(crowd.ids[0], name: "Hall").location
        #expect(location.crowdProfile == nil)
        for _ in 0..<2 {
            for player in crowd.ids { try await crowd.lobby.see(player, location: location) }
            try await crowd.mingle()
        }
        // Presence runs out 10 minutes (the encounter window) after the last sighting: open air.
        crowd.lobby.clock.advance(by: 500)
        try await crowd.mingle()
        let sites = try await crowd.lobby.store.database.read { db in
            try db.fetchAll("SELECT locationId, COUNT(*) FROM crowdExchange GROUP BY locationId ORDER BY locationId")
                .map { (try $0.get(0, as: Int64?.self), try $0.get(1, as: Int.self)) }
        }
        #expect(sites.count == 2)
        #expect(sites.contains { $0.0 == location.id && $0.1 == 2 * 15 })
        #expect(sites.contains { $0.0 == nil && $0.1 == 15 })
        try await crowd.lobby.store.solveCrowdCalibration()
        let profile = try #require(try await crowd.lobby.store.location(location.id).crowdProfile)
        #expect(profile.pairs == 15)
        #expect((1...6).contains(profile.exponent))
        // Without known distances the readings do not pin the exponent: the prior's 0.5 holds.
        #expect(profile.exponentError >= 0.4)
        #expect(profile.solvedAt == crowd.lobby.clock.now())
    }

    /// A player that reads everyone 20 dB high looks like a receiver 20 dB high: its own receive
    /// offset takes it, and the offset priors yield where a device is that far out, so the level
    /// every player shares (which only the prior holds) moves by less than a decibel.
    @Test func aLiarMovesHonestPlayersOffsetsByLessThanOneDecibel() async throws {
        let honest = try await Crowd()
        let lied = try await Crowd()
        lied.lie = { reader, _ in reader == 5 ? 20 : 0 }
        for _ in 0..<3 {
            try await honest.mingle()
            try await lied.mingle()
        }
        try await honest.lobby.store.solveCrowdCalibration()
        try await lied.lobby.store.solveCrowdCalibration()
        #expect(try await lied.offsets(5).receive - honest.offsets(5).receive > 15, "the liar's own offset takes the lie")
        for player in 0..<12 where player != 5 {
            let truth = try await honest.offsets(player), moved = try await lied.offsets(player)
            #expect(abs(truth.transmit - moved.transmit) < 1, "player \(player) transmit \(truth.transmit) → \(moved.transmit)")
            #expect(abs(truth.receive - moved.receive) < 1, "player \(player) receive \(truth.receive) → \(moved.receive)")
        }
    }

    @Test func eachPlayerCountsWithItsMostRecentPartnersOnly() async throws {
        let crowd = try await Crowd(count: 8) { $0.crowdPairsPerDevice = 4 }
        // Everyone met everyone, then players 0…4 met again: their most recent partners are each other.
        try await crowd.mingle()
        try await crowd.mingle(Array(0...4))
        let summary = try await crowd.lobby.store.solveCrowdCalibration()
        for player in 0...4 { #expect(try await crowd.offsets(player).pairs == 4) }
        // Players 5…7 have each other (2) and players 0…4, who no longer count them: too few.
        for player in 5...7 {
            let error = await #expect(throws: LobbyError.self) { try await crowd.offsets(player) }
            #expect(error?.code == .radioOffsetsNotSolved)
        }
        #expect(summary.pairs == 10 + 3)
    }

    @Test func exchangesAreSpacedAndPrunedAfterTheWindow() async throws {
        let crowd = try await Crowd(count: 3) { $0.crowdCalibrationWindow = 3600 }
        try await crowd.mingle()
        // Readings again within the spacing make no new exchange.
        crowd.lobby.clock.advance(by: -200 + 30)
        try await crowd.mingle()
        #expect(try await crowd.exchangeRows(of: 0) == 2)
        crowd.lobby.clock.advance(by: 3600)
        try await crowd.lobby.store.pruneCrowdExchanges()
        #expect(try await crowd.exchangeRows(of: 0) == 0)
    }

    @Test func refusesCrowdSettingsThatCannotWork() throws {
        let cases: [(String, (inout LobbyConfiguration) -> Void)] = [
            ("crowdPairSeconds", { $0.crowdPairSeconds = 0 }),
            ("crowdCalibrationWindow", { $0.crowdCalibrationWindow = -1 }),
            ("crowdExchangeSpacing", { $0.crowdExchangeSpacing = .nan }),
            ("crowdCalibrationInterval", { $0.crowdCalibrationInterval = -600 }),
            ("crowdPairsPerDevice", { $0.crowdPairsPerDevice = 0 }),
            ("crowdMinimumPairs", { $0.crowdMinimumPairs = 0 }),
            ("crowdMinimumPairs", { $0.crowdMinimumPairs = 60 }),
        ]
        for (field, change) in cases {
            var configuration = LobbyConfiguration()
            change(&configuration)
            let error = #expect(throws: LobbyError.self) { try configuration.validated() }
            #expect(error?.message.hasPrefix(field) == true, "\(error?.message ?? "no error") should name \(field)")
        }
        _ = try LobbyConfiguration().validated()
    }
}
