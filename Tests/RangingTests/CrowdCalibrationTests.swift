import BeaconFrames
import Foundation
import Ranging
import Testing

@Suite struct CrowdCalibrationTests {
    /// Devices with known offsets reading each other, as the model says, with 4 dB of noise.
    struct World {
        var transmit: [Double]
        var receive: [Double]
        var exponent: Double
        var random: SplitMix64

        init(devices: Int, exponent: Double, spread: Double = 8, shared: Double = 0, seed: UInt64) {
            var random = SplitMix64(seed: seed)
            var transmit: [Double] = [], receive: [Double] = []
            for _ in 0..<devices {
                transmit.append(Double.random(in: -spread...spread, using: &random) + shared)
                receive.append(Double.random(in: -spread...spread, using: &random) + shared)
            }
            self.transmit = transmit
            self.receive = receive
            self.exponent = exponent
            self.random = random
        }

        static func name(_ index: Int) -> String { "device-\(index)" }

        /// A hears B at distance d: measured power −59 advertised by everyone.
        mutating func reading(_ a: Int, hears b: Int, distance: Double, shadowing: Double = 0) -> TwoWayRanging.Direction {
            let rssi = -59 + transmit[b] + receive[a] - 10 * exponent * log10(distance) - shadowing + 4 * random.nextGaussian()
            return TwoWayRanging.Direction(filteredRSSI: rssi.rounded(), measuredPower: -59, filterVariance: 16)
        }

        /// Every pair of `devices` standing still at known spots, `count` readings each way. Each
        /// path has its own lasting shadowing, normal with standard deviation `lastingShadowing`
        /// dB and the same both ways, which no number of readings averages away.
        mutating func stillExchanges(_ devices: [Int], spots: [(Double, Double)], count: Int,
                                     lastingShadowing: Double = 0) -> [CrowdCalibration.Exchange] {
            var exchanges: [CrowdCalibration.Exchange] = []
            for (i, a) in devices.enumerated() {
                for (j, b) in devices.enumerated() where j > i {
                    let d = hypot(spots[i].0 - spots[j].0, spots[i].1 - spots[j].1)
                    // Drawn only when asked for, so the other tests' readings stay as they were.
                    let shadowing = lastingShadowing > 0 ? lastingShadowing * random.nextGaussian() : 0
                    for _ in 0..<count {
                        exchanges.append(.init(first: Self.name(a), second: Self.name(b),
                                               firstHearsSecond: reading(a, hears: b, distance: d, shadowing: shadowing),
                                               secondHearsFirst: reading(b, hears: a, distance: d, shadowing: shadowing), distance: d))
                    }
                }
            }
            return exchanges
        }

        /// Players mingling in an 8 m room: `rounds` moments at which everyone stands somewhere
        /// new, each pair exchanging readings at a distance no one knows.
        mutating func minglingExchanges(_ devices: [Int], rounds: Int) -> [CrowdCalibration.Exchange] {
            var exchanges: [CrowdCalibration.Exchange] = []
            for _ in 0..<rounds {
                let spots = devices.map { _ in (Double.random(in: 0...8, using: &random), Double.random(in: 0...8, using: &random)) }
                for (i, a) in devices.enumerated() {
                    for (j, b) in devices.enumerated() where j > i {
                        let d = max(0.1, hypot(spots[i].0 - spots[j].0, spots[i].1 - spots[j].1))
                        exchanges.append(.init(first: Self.name(a), second: Self.name(b), firstHearsSecond: reading(a, hears: b, distance: d),
                                               secondHearsFirst: reading(b, hears: a, distance: d)))
                    }
                }
            }
            return exchanges
        }
    }

    static let beaconSpots = [(0.5, 0.5), (2.0, 0.5), (7.5, 0.5), (7.5, 7.5), (0.5, 4.0), (4.0, 7.5)]

    static func beacons(_ count: Int) -> [CrowdCalibration.Device] {
        (0..<count).map { CrowdCalibration.Device(id: World.name($0), kind: .locationBeacon) }
    }

    /// The solve told the truth about `World`'s paths: no lasting shadowing (0.5 dB, fixed, not
    /// the estimate's 1 dB floor).
    static func stillOptions() -> CrowdCalibration.Options {
        var options = CrowdCalibration.Options()
        options.prior.shadowing = 0.5
        options.knownDistanceShadowing = .fixed
        return options
    }

    /// Six location beacons at known spots, 200 readings each way: every beacon's t + g within
    /// 1 dB, every reading's offset t_B + g_A within 1 dB, the exponent within 0.1, and each
    /// standard error small where the data pin the value.
    @Test func recoversKnownOffsetsFromBeaconsAtKnownSpots() throws {
        var world = World(devices: 6, exponent: 2.3, seed: 7)
        let exchanges = world.stillExchanges(Array(0..<6), spots: Self.beaconSpots, count: 200)
        let solution = CrowdCalibration.solve(devices: Self.beacons(6), exchanges: exchanges, options: Self.stillOptions())
        let site = try #require(solution.sites[""])
        #expect(abs(site.exponent - 2.3) < 0.1)
        #expect(site.exponentError < 0.1)
        for i in 0..<6 {
            let offsets = try #require(solution.devices[World.name(i)])
            #expect(abs(offsets.transmit + offsets.receive - world.transmit[i] - world.receive[i]) < 1)
            #expect(offsets.sumError < 1)
            for j in 0..<6 where j != i {
                let reading = try #require(solution.readingOffset(listener: World.name(i), speaker: World.name(j)))
                #expect(abs(reading.value - world.transmit[j] - world.receive[i]) < 1)
                #expect(reading.standardError < 1)
            }
        }
    }

    /// Players with unknown distances: the differences of t − g come out within 0.5 dB whatever
    /// the mingling assumption, since distance cancels in them.
    @Test func recoversTransmitMinusReceiveDifferencesAtUnknownDistances() throws {
        var world = World(devices: 8, exponent: 2.8, seed: 11)
        let exchanges = world.minglingExchanges(Array(0..<8), rounds: 150)
        let players = (0..<8).map { CrowdCalibration.Device(id: World.name($0)) }
        var options = CrowdCalibration.Options()
        options.mingling = .ignored
        let solution = CrowdCalibration.solve(devices: players, exchanges: exchanges, options: options)
        func u(_ i: Int) throws -> Double {
            let offsets = try #require(solution.devices[World.name(i)])
            return offsets.transmit - offsets.receive
        }
        for i in 1..<8 {
            let truth = (world.transmit[i] - world.receive[i]) - (world.transmit[0] - world.receive[0])
            #expect(try abs(u(i) - u(0) - truth) < 0.5)
        }
    }

    /// One beacon's readings of another 20 dB too strong, all 200 of them, move no other
    /// reading's offset by more than 0.3 dB; plain least squares moves some by more than 1 dB
    /// (so the test can tell).
    @Test func anOutlierPairDoesNotMoveTheAnswer() throws {
        var world = World(devices: 6, exponent: 2.3, seed: 7)
        let clean = world.stillExchanges(Array(0..<6), spots: Self.beaconSpots, count: 200)
        var corrupted = clean
        for k in corrupted.indices where corrupted[k].first == World.name(1) && corrupted[k].second == World.name(3) {
            corrupted[k].firstHearsSecond?.filteredRSSI += 20
        }
        var plain = Self.stillOptions()
        plain.huberThreshold = .infinity
        let reference = CrowdCalibration.solve(devices: Self.beacons(6), exchanges: clean, options: Self.stillOptions())
        let robust = CrowdCalibration.solve(devices: Self.beacons(6), exchanges: corrupted, options: Self.stillOptions())
        let fragile = CrowdCalibration.solve(devices: Self.beacons(6), exchanges: corrupted, options: plain)
        var robustShift = 0.0, fragileShift = 0.0
        for i in 0..<6 {
            for j in 0..<6 where j != i && !(i == 1 && j == 3) {
                let before = try #require(reference.readingOffset(listener: World.name(i), speaker: World.name(j))).value
                robustShift = max(robustShift, abs(try #require(robust.readingOffset(listener: World.name(i), speaker: World.name(j))).value - before))
                fragileShift = max(fragileShift, abs(try #require(fragile.readingOffset(listener: World.name(i), speaker: World.name(j))).value - before))
            }
        }
        #expect(robustShift < 0.3)
        #expect(fragileShift > 1)
        #expect(robust.downweighted >= 1)
    }

    /// Every player reads 5 dB high and transmits 5 dB strong, and no distance is known: the
    /// solve cannot tell (everyone might stand closer), so the mean t + g stays at the prior's 0
    /// with the prior's standard error (√(6² + 6²)/√12 ≈ 2.45 dB), while the differences are
    /// pinned to a fraction of a dB; and the exponent stays 2.8 ± 0.5.
    @Test func withoutAnAnchorTheCommonModeStaysAtThePrior() throws {
        var world = World(devices: 12, exponent: 2.2, shared: 5, seed: 3)
        let exchanges = world.minglingExchanges(Array(0..<12), rounds: 100)
        let players = (0..<12).map { CrowdCalibration.Device(id: World.name($0)) }
        let solution = CrowdCalibration.solve(devices: players, exchanges: exchanges)
        let common = try #require(solution.combination((0..<12).flatMap {
            [(CrowdCalibration.Parameter.transmit(World.name($0)), 1.0 / 12), (CrowdCalibration.Parameter.receive(World.name($0)), 1.0 / 12)]
        }))
        #expect(abs(common.value) < 1.5)   // the truth is 10
        #expect(abs(common.standardError - 72.0.squareRoot() / 12.0.squareRoot()) < 0.2)
        let difference = try #require(solution.combination([(.transmit(World.name(1)), 1), (.receive(World.name(1)), -1),
                                                            (.transmit(World.name(0)), -1), (.receive(World.name(0)), 1)]))
        #expect(difference.standardError < 0.5)
        let site = try #require(solution.sites[""])
        #expect(abs(site.exponent - 2.8) < 0.01)
        #expect(abs(site.exponentError - 0.5) < 0.01)
    }

    /// The same crowd with one anchor (a device of known offsets): the common mode follows it,
    /// within its published standard error.
    @Test func anAnchorPinsTheCommonMode() throws {
        var world = World(devices: 12, exponent: 2.2, shared: 5, seed: 3)
        let exchanges = world.minglingExchanges(Array(0..<12), rounds: 100)
        var players = (0..<12).map { CrowdCalibration.Device(id: World.name($0)) }
        players[0].known = .init(transmit: world.transmit[0], receive: world.receive[0])
        let solution = CrowdCalibration.solve(devices: players, exchanges: exchanges)
        for i in 1..<12 {
            let offsets = try #require(solution.devices[World.name(i)])
            let error = offsets.transmit + offsets.receive - world.transmit[i] - world.receive[i]
            #expect(abs(error) < max(1.5, 3 * offsets.sumError))
            #expect(offsets.sumError < 1.5)
        }
    }

    /// Five location beacons at known spots in a room without lasting shadowing, 200 readings
    /// each way: the estimated shadowing stays at its 1 dB floor, the exponent comes within 0.3
    /// of the truth with a standard error agents accept (≤ 0.3; 0.19 measured), where the fixed
    /// 6 dB prior gives 0.35 (so the test can tell).
    @Test func estimatedShadowingLetsFiveBeaconsPinTheExponentInAStillRoom() throws {
        for seed in UInt64(1)...10 {
            var world = World(devices: 5, exponent: 2.0 + Double(seed % 7) * 0.25, seed: seed)
            let exchanges = world.stillExchanges(Array(0..<5), spots: Self.beaconSpots, count: 200)
            let estimated = try #require(CrowdCalibration.solve(devices: Self.beacons(5), exchanges: exchanges).sites[""])
            var fixed = CrowdCalibration.Options()
            fixed.knownDistanceShadowing = .fixed
            let assumed = try #require(CrowdCalibration.solve(devices: Self.beacons(5), exchanges: exchanges, options: fixed).sites[""])
            let shadowing = try #require(estimated.shadowing)
            #expect(shadowing < 1.5)
            #expect(estimated.exponentError <= 0.3)
            #expect(abs(estimated.exponent - world.exponent) <= 0.3)
            #expect(assumed.shadowing == 6)
            #expect(assumed.exponentError > 0.3)
        }
    }

    /// Six beacons in 20 rooms whose every path has its own lasting shadowing (4 dB standard
    /// deviation): the estimate lands within 2–7 dB in at least 18 rooms (19 measured; 2.2–7.2 dB)
    /// with a median within 3–5 dB (4.15), and the exponent lies within two published standard
    /// errors of the truth in at least 17 (20 measured). Told the room has 1 dB, the same solve
    /// claims errors so small they cover at most 14 (9 measured), so the test can tell.
    @Test func estimatedShadowingFollowsTheRoomAndItsErrorsCoverTheTruth() throws {
        var estimates: [Double] = []
        var covered = 0, coveredWhenTold1dB = 0
        for seed in UInt64(101)...120 {
            var world = World(devices: 6, exponent: 2.0 + Double(seed % 7) * 0.25, seed: seed)
            let exchanges = world.stillExchanges(Array(0..<6), spots: Self.beaconSpots, count: 200, lastingShadowing: 4)
            let site = try #require(CrowdCalibration.solve(devices: Self.beacons(6), exchanges: exchanges).sites[""])
            estimates.append(try #require(site.shadowing))
            if abs(site.exponent - world.exponent) <= 2 * site.exponentError { covered += 1 }
            var told = CrowdCalibration.Options()
            told.knownDistanceShadowing = .fixed
            told.prior.shadowing = 1
            let naive = try #require(CrowdCalibration.solve(devices: Self.beacons(6), exchanges: exchanges, options: told).sites[""])
            if abs(naive.exponent - world.exponent) <= 2 * naive.exponentError { coveredWhenTold1dB += 1 }
        }
        #expect(estimates.filter { (2...7).contains($0) }.count >= 18)
        #expect((3...5).contains(try #require(Calibration.median(estimates))))
        #expect(covered >= 17)
        #expect(coveredWhenTold1dB <= 14)
    }

    /// Five beacons, the fewest agents use, leave 4 degrees of freedom, and the estimate is
    /// noisier than six beacons': over 40 rooms with 4 dB of lasting shadowing per path it runs
    /// 1.7–7.8 dB (median 4.1), the truth lies within two published errors in 37 (at least 34
    /// asserted), and the error comes out at 0.3 or less, which agents use, in 8 rooms, 3 of them
    /// with the exponent more than 0.3 off (at most 5 asserted): where the estimate came out
    /// low, the error is too small. Six beacons or more in a room with walls and furniture.
    @Test func fiveBeaconsInAShadowedRoomPublishErrorsThatMostlyCoverTheTruth() throws {
        var estimates: [Double] = []
        var covered = 0, usable = 0, usableAndWrong = 0
        for seed in UInt64(201)...240 {
            var world = World(devices: 5, exponent: 2.0 + Double(seed % 7) * 0.25, seed: seed)
            let exchanges = world.stillExchanges(Array(0..<5), spots: Self.beaconSpots, count: 200, lastingShadowing: 4)
            let site = try #require(CrowdCalibration.solve(devices: Self.beacons(5), exchanges: exchanges).sites[""])
            estimates.append(try #require(site.shadowing))
            if abs(site.exponent - world.exponent) <= 2 * site.exponentError { covered += 1 }
            if site.exponentError <= 0.3 {
                usable += 1
                if abs(site.exponent - world.exponent) > 0.3 { usableAndWrong += 1 }
            }
        }
        #expect(covered >= 34, "\(covered) of 40")
        #expect((3...5).contains(try #require(Calibration.median(estimates))))
        #expect(usableAndWrong <= 5, "\(usableAndWrong) of \(usable) usable rooms more than 0.3 off")
    }

    /// Four beacons leave one degree of freedom (6 pairs less 4 devices' t + g less the exponent),
    /// too few to estimate from: the solve keeps the prior's 6 dB, exactly as `.fixed` would.
    @Test func fourBeaconsFallBackToThePriorShadowing() throws {
        var world = World(devices: 4, exponent: 2.5, seed: 5)
        let exchanges = world.stillExchanges(Array(0..<4), spots: Self.beaconSpots, count: 200, lastingShadowing: 4)
        let estimated = try #require(CrowdCalibration.solve(devices: Self.beacons(4), exchanges: exchanges).sites[""])
        var fixed = CrowdCalibration.Options()
        fixed.knownDistanceShadowing = .fixed
        let assumed = try #require(CrowdCalibration.solve(devices: Self.beacons(4), exchanges: exchanges, options: fixed).sites[""])
        #expect(estimated.shadowing == 6)
        #expect(estimated.exponentError == assumed.exponentError)
        #expect(estimated.exponentError > 0.3)
    }

    /// Players alone (no distance known) report no shadowing.
    @Test func sitesWithoutKnownDistancesReportNoShadowing() throws {
        var world = World(devices: 6, exponent: 2.5, seed: 9)
        let exchanges = world.minglingExchanges(Array(0..<6), rounds: 20)
        let solution = CrowdCalibration.solve(devices: (0..<6).map { CrowdCalibration.Device(id: World.name($0)) }, exchanges: exchanges)
        #expect(try #require(solution.sites[""]).shadowing == nil)
    }
}
