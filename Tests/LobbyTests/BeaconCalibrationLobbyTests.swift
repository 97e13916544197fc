import BeaconFrames
import Foundation
import LobbyDatabase
import Testing
@testable import Lobby

/// Calibration from location beacons through the store: an owner places its beacons on a site,
/// each reports what it hears of the others, the lobby pairs the two directions of each path at
/// the distance the positions give and the solve publishes the site's exponent as each
/// location's crowd profile.
@Suite struct BeaconCalibrationLobbyTests {
    /// An owner's beacons in a hall: `r = P + t_heard + g_listener − 10·n·log10(d) + noise`,
    /// P = −59 dBm, offsets uniform in ±6 dB, noise 1 dB.
    final class Hall {
        let lobby: TestLobby
        let owner: Int64
        var locations: [Int64] = []
        let spots: [(Double, Double)]
        let exponent: Double
        let transmit: [Double]
        let receive: [Double]
        var random: SplitMix64

        init(spots: [(Double, Double)], exponent: Double, seed: UInt64 = 12, site: String = "Main hall") async throws {
            lobby = try await TestLobby { $0.locationsPerDay = 20 }
            owner = try await lobby.player("operator").id
            self.spots = spots
            self.exponent = exponent
            var random = SplitMix64(seed: seed)
            let offsets = spots.map { _ in (12 * random.nextDouble() - 6, 12 * random.nextDouble() - 6) }
            self.random = random
            transmit = offsets.map(\.0)
            receive = offsets.map(\.1)
            for (index, spot) in spots.enumerated() {
                let location = try await lobby.store.registerLocation(owner, name: "Beacon \(index)").location
                locations.append(location.id)
                let placed = try await lobby.store.placeLocation(owner, location: location.id, site: site, x: spot.0, y: spot.1)
                #expect(placed.position == LocationPosition(site: site, x: spot.0, y: spot.1, placedAt: lobby.clock.now()))
            }
        }

        /// What beacon `listener` reads of beacon `heard` now.
        func hearing(_ listener: Int, _ heard: Int) async throws -> EncounterReport {
            let d = hypot(spots[listener].0 - spots[heard].0, spots[listener].1 - spots[heard].1)
            let rssi = -59 + transmit[heard] + receive[listener] - 10 * exponent * log10(d) + random.nextGaussian()
            let identity = try #require(try await lobby.store.currentLocationBeacon(locations[heard], at: lobby.clock.now()))
            return EncounterReport(identity, distance: nil, at: lobby.clock.now(), rssi: rssi, measuredPower: MeasuredPower(dBm: -59), rssiVariance: 1)
        }

        /// One round: every beacon on the air says so and reports its hearings of all the others;
        /// then the clock moves past the exchange spacing.
        @discardableResult
        func round() async throws -> [LocationHearingReceipt] {
            for location in locations { try await lobby.store.markOnAir(owner, location: location) }
            var receipts: [LocationHearingReceipt] = []
            for listener in locations.indices {
                var hearings: [EncounterReport] = []
                for heard in locations.indices where heard != listener { hearings.append(try await hearing(listener, heard)) }
                receipts.append(try await lobby.store.reportLocationHearings(owner, location: locations[listener], hearings))
            }
            lobby.clock.advance(by: 61)
            return receipts
        }

        func exchanges() async throws -> Int {
            try await lobby.store.database.read { db in try db.fetchValue(Int.self, "SELECT COUNT(*) FROM locationExchange") } ?? -1
        }
    }

    static let fiveSpots = [(0.0, 0.0), (12.0, 0.0), (12.0, 8.0), (0.0, 8.0), (4.0, 3.0)]

    /// Five beacons in a hall of exponent 2.2, twenty rounds of hearings: every pair makes one
    /// exchange a round, and the solve publishes to each location the site's exponent, from
    /// beacons, within 0.3 of the truth and with an error of 0.3 or less (so agents use it).
    @Test func beaconsPlacedOnASiteCalibrateItsExponent() async throws {
        let hall = try await Hall(spots: Self.fiveSpots, exponent: 2.2)
        let first = try await hall.round()
        // The first reports find no reverse hearing yet for the earlier listeners' paths: the
        // later ones complete them. Every pair, once.
        #expect(first.map(\.recorded) == [4, 4, 4, 4, 4] && first.map(\.ignored) == [0, 0, 0, 0, 0], "\(first)")
        #expect(first.map(\.exchanges).reduce(0, +) == 10, "\(first)")
        for _ in 1..<20 { try await hall.round() }
        #expect(try await hall.exchanges() == 200)
        let summary = try await hall.lobby.store.solveCrowdCalibration()
        #expect(summary.beacons == 5 && summary.beaconSites == 1 && summary.locations == 5, "\(summary)")
        for location in hall.locations {
            let profile = try #require(try await hall.lobby.store.location(location).crowdProfile)
            #expect(profile.source == .beacons && profile.pairs == 10, "\(profile)")
            #expect(abs(profile.exponent - 2.2) < 0.3, "\(profile)")
            #expect(profile.exponentError <= 0.3, "\(profile)")
            #expect((profile.shadowing ?? 99) < 1.5, "a still room's paths shadow little: \(profile)")
        }
    }

    /// Only one owner's beacons placed on one site calibrate it: a stranger's beacon on a site
    /// of the same name, the owner's beacon on another site, a player, a reading without an
    /// RSSI and the beacon itself are ignored; a stranger cannot place or report for the
    /// owner's location; an unplaced beacon's report is refused with what to do; a move
    /// forgets what the beacon heard.
    @Test func onlyOneOwnersBeaconsOnOneSiteCountAndAMoveForgets() async throws {
        let hall = try await Hall(spots: Array(Self.fiveSpots.prefix(3)), exponent: 2.5)
        let lobby = hall.lobby
        let owner = hall.owner
        let (stranger, _) = try await lobby.player("stranger")
        let foreign = try await lobby.store.registerLocation(stranger, name: "Stranger's").location
        _ = try await lobby.store.placeLocation(stranger, location: foreign.id, site: "Main hall", x: 1, y: 1)
        let elsewhere = try await lobby.store.registerLocation(owner, name: "Annex").location
        _ = try await lobby.store.placeLocation(owner, location: elsewhere.id, site: "Annex", x: 1, y: 1)
        let unplaced = try await lobby.store.registerLocation(owner, name: "Cupboard").location
        try await lobby.store.markOnAir(stranger, location: foreign.id)
        try await lobby.store.markOnAir(owner, location: elsewhere.id)
        let now = lobby.clock.now()
        func heard(_ id: Int64) async throws -> EncounterReport {
            EncounterReport(try #require(try await lobby.store.currentLocationBeacon(id, at: now)), distance: nil, at: now,
                            rssi: -70, measuredPower: MeasuredPower(dBm: -59), rssiVariance: 1)
        }
        var silent = try await heard(hall.locations[1])
        silent.rssi = nil
        silent.measuredPower = nil
        silent.rssiVariance = nil
        let player = EncounterReport(try await lobby.beacon(of: "stranger"), distance: nil, at: now,
                                     rssi: -70, measuredPower: MeasuredPower(dBm: -59))
        let receipt = try await lobby.store.reportLocationHearings(owner, location: hall.locations[0], [
            try await heard(foreign.id), try await heard(elsewhere.id), try await heard(hall.locations[0]), silent, player,
            try await heard(hall.locations[2]),
        ])
        #expect(receipt == LocationHearingReceipt(recorded: 1, ignored: 5, exchanges: 0),
                "only beacon 2 counts, and it has not heard beacon 0 yet: \(receipt)")
        let listener = hall.locations[0]
        #expect(try await lobby.store.database.read { db in
            try db.fetchAll("SELECT heardId FROM locationHearing WHERE listenerId = ?", listener).map { try $0.get(0, as: Int64.self) }
        } == [hall.locations[2]])
        try await hall.round()
        #expect(try await hall.exchanges() == 3)

        // Strangers are answered as if the location were not there.
        for attempt in [
            { _ = try await lobby.store.placeLocation(stranger, location: hall.locations[0], site: "Main hall", x: 0, y: 0) },
            { _ = try await lobby.store.unplaceLocation(stranger, location: hall.locations[0]) },
            { _ = try await lobby.store.reportLocationHearings(stranger, location: hall.locations[0], []) },
        ] as [() async throws -> Void] {
            let error = await #expect(throws: LobbyError.self) { try await attempt() }
            #expect(error?.code == .locationNotFound)
        }
        let notPlaced = await #expect(throws: LobbyError.self) {
            try await lobby.store.reportLocationHearings(owner, location: unplaced.id, [try await heard(hall.locations[0])])
        }
        #expect(notPlaced?.code == .locationNotPlaced && notPlaced?.kind == .conflict)
        #expect(notPlaced?.message.contains("place it first") == true, "\(String(describing: notPlaced))")
        // Places out of range or without a name are refused, naming the field.
        for (site, x, y, field) in [("Main hall", 1001.0, 0.0, "x"), ("Main hall", 0, Double.nan, "y"), (" ", 0, 0, "site")] {
            let error = await #expect(throws: LobbyError.self) {
                try await lobby.store.placeLocation(owner, location: hall.locations[0], site: site, x: x, y: y)
            }
            #expect(error?.code == .invalidField && error?.message.hasPrefix("\(field):") == true, "\(String(describing: error))")
        }

        // Placing at the same spot again keeps what it heard; a move forgets its paths.
        _ = try await lobby.store.placeLocation(owner, location: hall.locations[0], site: "Main hall", x: 0, y: 0)
        #expect(try await hall.exchanges() == 3)
        let moved = try await lobby.store.placeLocation(owner, location: hall.locations[0], site: "Main hall", x: 2, y: 0)
        #expect(moved.position?.x == 2)
        #expect(try await hall.exchanges() == 1, "only the path between the two that stayed")
        let movedId = hall.locations[0]
        #expect(try await lobby.store.database.read { db in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM locationHearing WHERE listenerId = ?1 OR heardId = ?1", movedId)
        } == 0)
        let gone = try await lobby.store.unplaceLocation(owner, location: hall.locations[1])
        #expect(gone.position == nil)
        #expect(try await hall.exchanges() == 0)
    }

    /// Readings out of range are refused naming the hearing; too many hearings are refused;
    /// several identities of one location count once; a hearing from before a beacon was placed
    /// where it stands is ignored; only the owner sees where its beacons stand; deleting the
    /// owner forgets positions, hearings, exchanges and the beacons' profiles.
    @Test func badReadingsStaleHearingsStrangersAndDeletion() async throws {
        let hall = try await Hall(spots: Array(Self.fiveSpots.prefix(3)), exponent: 2.5)
        let lobby = hall.lobby
        let now = lobby.clock.now()
        let heard = try #require(try await lobby.store.currentLocationBeacon(hall.locations[1], at: now))
        for (rssi, power, variance, field) in [(50.0, -59.0, 1.0, "rssi"), (-70, 300, 1, "measuredPower"), (-70, -59, -1, "rssiVariance")] {
            let error = await #expect(throws: LobbyError.self) {
                try await lobby.store.reportLocationHearings(hall.owner, location: hall.locations[0], [
                    EncounterReport(heard, distance: nil, at: now, rssi: -70, measuredPower: MeasuredPower(dBm: -59)),
                    EncounterReport(heard, distance: nil, at: now, rssi: rssi, measuredPower: MeasuredPower(dBm: power), rssiVariance: variance),
                ])
            }
            #expect(error?.code == .invalidField && error?.message.hasPrefix("hearings[1].\(field):") == true, "\(String(describing: error))")
        }
        let tooMany = await #expect(throws: LobbyError.self) {
            try await lobby.store.reportLocationHearings(hall.owner, location: hall.locations[0],
                Array(repeating: EncounterReport(heard, distance: nil, at: now), count: 101))
        }
        #expect(tooMany?.code == .invalidField && tooMany?.message.hasPrefix("hearings:") == true)
        // The same location twice (its identity heard at two moments): the latest counts, once.
        let twice = try await lobby.store.reportLocationHearings(hall.owner, location: hall.locations[0], [
            EncounterReport(heard, distance: nil, at: now.addingTimeInterval(-2), rssi: -80, measuredPower: MeasuredPower(dBm: -59)),
            EncounterReport(heard, distance: nil, at: now, rssi: -70, measuredPower: MeasuredPower(dBm: -59)),
        ])
        #expect(twice == LocationHearingReceipt(recorded: 1, ignored: 1, exchanges: 0), "\(twice)")
        let (first, second) = (hall.locations[0], hall.locations[1])
        #expect(try await lobby.store.database.read { db in
            try db.fetchValue(Double.self, "SELECT rssi FROM locationHearing WHERE listenerId = ? AND heardId = ?", first, second)
        } == -70)
        // Beacon 1 moves; a hearing of it from before the move does not count.
        lobby.clock.advance(by: 5)
        _ = try await lobby.store.placeLocation(hall.owner, location: second, site: "main HALL", x: 3, y: 3)
        let stale = try await lobby.store.reportLocationHearings(hall.owner, location: first, [
            EncounterReport(heard, distance: nil, at: now, rssi: -70, measuredPower: MeasuredPower(dBm: -59)),
        ])
        #expect(stale.recorded == 0 && stale.ignored == 1, "\(stale)")
        // Site labels compare without regard to case: "main HALL" is "Main hall".
        let fresh = try #require(try await lobby.store.currentLocationBeacon(second, at: lobby.clock.now()))
        let counted = try await lobby.store.reportLocationHearings(hall.owner, location: first, [
            EncounterReport(fresh, distance: nil, at: lobby.clock.now(), rssi: -70, measuredPower: MeasuredPower(dBm: -59)),
        ])
        #expect(counted.recorded == 1, "\(counted)")

        // Only the owner sees where a beacon stands.
        let (stranger, _) = try await lobby.player("stranger")
        #expect(try await lobby.store.location(first, viewer: hall.owner).position?.site == "Main hall")
        #expect(try await lobby.store.location(first, viewer: stranger).position == nil)
        #expect(try await lobby.store.location(first).position == nil)
        let resolved = try await lobby.store.resolveLocation(viewer: stranger, beacon: fresh)
        #expect(resolved.id == second && resolved.position == nil)

        // Each location reports at most 60 times a minute; another location of the owner is not held up.
        var throttled: LobbyError?
        for _ in 0..<61 where throttled == nil {
            do { _ = try await lobby.store.reportLocationHearings(hall.owner, location: hall.locations[2], []) } catch let error as LobbyError { throttled = error }
        }
        #expect(throttled?.code == .tooManyReports && throttled?.kind == .throttled, "\(String(describing: throttled))")
        #expect(try await lobby.store.reportLocationHearings(hall.owner, location: first, []).recorded == 0)
        lobby.clock.advance(by: 60)

        // Deleting the owner forgets where its beacons stood and what they heard.
        for _ in 0..<3 { try await hall.round() }
        _ = try await lobby.store.solveCrowdCalibration()
        #expect(try await lobby.store.location(first).crowdProfile?.source == .beacons)
        try await lobby.store.deletePlayer(hall.owner)
        let left = try await lobby.store.database.read { db in
            [try db.fetchValue(Int.self, "SELECT COUNT(*) FROM locationHearing") ?? -1,
             try db.fetchValue(Int.self, "SELECT COUNT(*) FROM locationExchange") ?? -1,
             try db.fetchValue(Int.self, "SELECT COUNT(*) FROM crowdProfile") ?? -1,
             try db.fetchValue(Int.self, "SELECT COUNT(*) FROM location WHERE positionSite IS NOT NULL OR placedAt IS NOT NULL") ?? -1]
        }
        #expect(left == [0, 0, 0, 0], "hearings, exchanges, profiles, positions left: \(left)")
    }

    /// Where players present at a location and its placed beacons both give an exponent, the
    /// better pinned one is published: the beacons', at known distances.
    @Test func beaconsWinOverPlayersWhereTheyPinTheExponentBetter() async throws {
        let hall = try await Hall(spots: Self.fiveSpots, exponent: 3.0)
        for _ in 0..<6 { try await hall.round() }
        // Two players present at beacon 0 exchange readings of each other there.
        let lobby = hall.lobby
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.store.markOnAir(hall.owner, location: hall.locations[0])
        let now = lobby.clock.now()
        let here = try #require(try await lobby.store.currentLocationBeacon(hall.locations[0], at: now))
        for (reader, seen) in [(alice, "bob"), (bob, "alice")] {
            lobby.store.noteActive(alice)
            lobby.store.noteActive(bob)
            _ = try await lobby.store.recordEncounters(reporter: reader, [
                EncounterReport(here, distance: 2, at: now),
                EncounterReport(try await lobby.beacon(of: seen), distance: 2, at: now, rssi: -68, measuredPower: MeasuredPower(dBm: -59), rssiVariance: 1),
            ])
        }
        let there = hall.locations[0]
        #expect(try await lobby.store.database.read { db in
            try db.fetchValue(Int.self, "SELECT COUNT(*) FROM crowdExchange WHERE locationId = ?", there)
        } == 1)
        _ = try await lobby.store.solveCrowdCalibration()
        let profile = try #require(try await lobby.store.location(hall.locations[0]).crowdProfile)
        #expect(profile.source == .beacons && profile.exponentError < 0.3 && abs(profile.exponent - 3) < 0.3, "\(profile)")
    }
}
