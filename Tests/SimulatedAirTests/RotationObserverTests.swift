import BeaconFrames
import BeaconKeys
import Foundation
@testable import Radio
import Synchronization
import Testing

/// Rotating identities on the simulated air, seen by a passive observer: what issue 22 promises
/// ("a third device scanning for an hour of scenario time with a short period cannot link two
/// periods of one player").
@Suite(.serialized, .timeLimit(.minutes(5))) struct RotationObserverTests {
    /// 100 scenario seconds per second of the hub's clock: one 10 ms tick is 1 scenario second,
    /// under the simulation's 2 s lag limit, so no transmission is skipped.
    static let speed = 100
    static let tick: Duration = .milliseconds(10)
    static let period = RotationPeriod(seconds: 60)!
    /// Scenario time 0 as Unix time: a period boundary, so boundaries fall on whole ticks.
    static let epoch: TimeInterval = 1_800_000_000

    static func scenario() -> AirScenario {
        AirScenario(exponent: 2, sigma: 1, loss: 0, seed: 22,
                    devices: ["alice": .init(waypoints: Fixtures.still(1)), "bob": .init(waypoints: Fixtures.still(2)),
                              "carol": .init(waypoints: Fixtures.still(0, 3)), "eve": .init(waypoints: Fixtures.still(0))],
                    beacons: [], source: "observer-room.json")
    }

    /// Scenario seconds at `instant`, exactly (integer nanoseconds times the integer speed), so a
    /// boundary is reached on a tick and not a rounding error before it.
    static func scenarioSeconds(_ instant: ManualClock.Instant) -> TimeInterval {
        let (seconds, attoseconds) = instant.offset.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return Double(nanoseconds * Int64(speed)) / 1e9
    }

    /// The beacons' clock: half a second behind the hub's (not before 0).
    static func beaconSeconds(_ instant: ManualClock.Instant) -> TimeInterval {
        max(scenarioSeconds(instant) - 0.5, 0)
    }

    /// One frame the observer heard, at the hub's scenario time.
    struct Heard: Sendable {
        var time: Double
        var address: BluetoothAddress
        var identity: BeaconIdentity
    }

    @Test func aPassiveObserverCannotLinkTwoPeriodsOfAPlayer() async throws {
        let clock = ManualClock()
        let hub = try SimulatedAirHub(scenario: Self.scenario(), socketPath: temporarySocketPath(), speed: Double(Self.speed), clock: clock)
        let running = RunningHub(hub)
        let path = running.socketPath

        // Eve listens with a bare connection, to keep the hub's own frame times.
        let heard = Mutex<[Heard]>([])
        let listening = Task {
            try await AirClientConnection.connect(path: path, device: "eve") { eve in
                try eve.send(.scan)
                for try await batch in eve.batches {
                    for case .advertisement(let time, let address, _, let data) in batch {
                        guard let (identity, _) = Sighting.decodeIdentity(data) else { continue }
                        heard.withLock { $0.append(Heard(time: time, address: address, identity: identity)) }
                    }
                }
            }
        }

        // Three players, each an agent's rotating beacon on the scenario's clock.
        let players = ["alice", "bob", "carol"]
        var beacons: [String: RotatingBeacon] = [:]
        var advertising: [Task<Void, any Error>] = []
        for name in players {
            let beacon = RotatingBeacon(uuid: Fixtures.uuid, secret: .random(), period: Self.period, role: .player,
                                        interval: .seconds(1))
            beacons[name] = beacon
            let payloads = beacon.payloads(
                now: { Date(timeIntervalSince1970: Self.epoch + Self.beaconSeconds(clock.now)) },
                sleep: { seconds in
                    let nanoseconds = Int64((seconds * 1e9 / Double(Self.speed)).rounded(.up))
                    try await clock.sleep(until: clock.now.advanced(by: .nanoseconds(nanoseconds)), tolerance: nil)
                })
            let advertiser = SimulatedAirAdvertiser(socketPath: path, device: name)
            advertising.append(Task { try await advertiser.advertise(rotating: payloads) })
        }
        #expect(await running.waitFor(scanning: 1, advertising: players.count))

        // An hour of scenario time, half a tick at a time. The beacons' clocks run half a second
        // behind the hub's, so a rotation falls between two of the hub's ticks (never on one,
        // where whether it or the tick's transmissions came first would be a race): the frames
        // up to the boundary went out at the tick before, every later one goes out with the new
        // pair, as on a controller that switches between two advertising events. After each
        // step, wait until the hub and the beacons sleep again and every rotation due has
        // reached the hub.
        let hour = 3600
        let began = ContinuousClock.now
        try #require(await Self.settle(clock, hub, sleepers: 1 + players.count, rotations: players.count))
        for half in 1...(2 * hour) {
            clock.advance(by: Self.tick / 2)
            let beaconTime = max(Double(half) / 2 - 0.5, 0)
            let periodsStarted = 1 + Int(beaconTime) / Self.period.seconds
            try #require(await Self.settle(clock, hub, sleepers: 1 + players.count, rotations: players.count * periodsStarted),
                         "scenario second \(Double(half) / 2): \(hub.census)")
        }
        let delivered = hub.census.framesDelivered
        let deadline = ContinuousClock.now + .seconds(60)
        while heard.withLock({ $0.count }) < delivered, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let wall = began.duration(to: .now)
        for task in advertising { task.cancel() }
        for task in advertising { try await task.value }
        listening.cancel()
        await running.stop()

        let frames = heard.withLock { $0 }
        #expect(frames.count == delivered, "every frame sent reached the observer")
        // One frame a second per player, for an hour.
        #expect(frames.count > players.count * hour * 9 / 10, "\(frames.count) frames")

        // Who sent what, as only the test knows: each identity belongs to one player and period.
        var owner: [BeaconIdentity: (player: String, period: Int)] = [:]
        for (name, beacon) in beacons {
            for period in 0..<(hour / Self.period.seconds) {
                owner[beacon.beaconIdentity(period: Int64(Self.epoch) / Int64(Self.period.seconds) + Int64(period))] = (name, period)
            }
        }
        #expect(frames.allSatisfy { owner[$0.identity] != nil }, "only the players' derived identities are on the air")
        #expect(frames.allSatisfy { owner[$0.identity]?.period == Int($0.time) / Self.period.seconds },
                "each identity is heard in its own period only")

        var identitiesByAddress: [BluetoothAddress: Set<BeaconIdentity>] = [:]
        var addressesByIdentity: [BeaconIdentity: Set<BluetoothAddress>] = [:]
        var periodsByAddress: [BluetoothAddress: Set<Int>] = [:]
        var periodsByIdentity: [BeaconIdentity: Set<Int>] = [:]
        for frame in frames {
            let period = Int(frame.time) / Self.period.seconds
            identitiesByAddress[frame.address, default: []].insert(frame.identity)
            addressesByIdentity[frame.identity, default: []].insert(frame.address)
            periodsByAddress[frame.address, default: []].insert(period)
            periodsByIdentity[frame.identity, default: []].insert(period)
        }
        #expect(identitiesByAddress.values.allSatisfy { $0.count == 1 }, "every address is heard with exactly one identity")
        #expect(addressesByIdentity.values.allSatisfy { $0.count == 1 }, "every identity is heard from exactly one address")
        #expect(periodsByAddress.values.allSatisfy { $0.count == 1 }, "no address is heard in two periods")
        #expect(periodsByIdentity.values.allSatisfy { $0.count == 1 }, "no identity is heard in two periods")
        #expect(identitiesByAddress.keys.allSatisfy { $0.randomKind == .nonResolvablePrivate })
        #expect(!identitiesByAddress.keys.contains { address in players.contains { SimulatedAir.address(of: $0) == address } },
                "never the device's own address")

        // Every period of every player was heard, and its switch was one event: the last frame
        // before a boundary has the old pair, the first after it the new one, nothing between.
        var linkable = 0
        var switches = 0
        for name in players {
            let own = frames.filter { owner[$0.identity]?.player == name }.sorted { $0.time < $1.time }
            let periods = Dictionary(grouping: own) { Int($0.time) / Self.period.seconds }
            #expect(periods.count == hour / Self.period.seconds, "\(name) heard in \(periods.count) periods")
            let keys = periods.keys.sorted()
            for (index, first) in keys.enumerated() {
                for second in keys[(index + 1)...] {
                    let a = periods[first]!, b = periods[second]!
                    if !Set(a.map(\.address)).isDisjoint(with: b.map(\.address))
                        || !Set(a.map(\.identity)).isDisjoint(with: b.map(\.identity))
                    {
                        linkable += 1
                    }
                }
            }
            for (before, after) in zip(own, own.dropFirst()) where Int(before.time) / 60 != Int(after.time) / 60 {
                switches += 1
                #expect(before.address != after.address && before.identity != after.identity,
                        "\(name) at \(after.time): \(before.address) \(before.identity) then \(after.address) \(after.identity)")
            }
        }
        #expect(switches == players.count * (hour / Self.period.seconds - 1))
        print("linkable periods: \(linkable) (\(players.count) players, \(hour / Self.period.seconds) periods of \(Self.period) each, "
            + "\(frames.count) frames from \(identitiesByAddress.count) addresses, \(switches) switches; \(wall) of wall time)")
        #expect(linkable == 0)
    }

    /// Waits until `sleepers` tasks sleep on the clock (the hub and each beacon: the tick is
    /// done) and the hub has handled `rotations`; false after 30 s.
    static func settle(_ clock: ManualClock, _ hub: SimulatedAirHub<ManualClock>, sleepers: Int, rotations: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while clock.sleeping < sleepers || hub.census.rotations < rotations {
            guard ContinuousClock.now < deadline else { return false }
            await Task.yield()
            try? await Task.sleep(for: .microseconds(200))
        }
        return true
    }
}
