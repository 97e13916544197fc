import BeaconFrames
import BusTestSupport
import Foundation
import Radio
import Testing

/// What every ``AdvertisementScanner`` must do, run against each implementation: the trace replay, BlueZ
/// (over a private bus with the BlueZ mock), raw HCI (a fake controller on a socketpair) and the
/// simulated air (a hub on a temporary socket).
/// One test at a time: each starts a bus and a Python mock, and the machine is shared.
@Suite(.serialized) struct ScannerConformanceTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case replay, bluez, hci, sim
        var testDescription: String { rawValue }
    }

    /// The air both backends see: two iBeacons and their signal strengths.
    static let air = [
        Beacons.advertisement(Beacons.first, Beacons.firstAddress, rssi: -63),
        Beacons.advertisement(Beacons.second, Beacons.secondAddress, rssi: -71),
    ]

    /// Starts `backend` with `air` on it; returns the probe and a way to tear everything down.
    static func start(_ backend: Backend) async throws -> (ScanProbe, () async -> Void) {
        switch backend {
        case .replay:
            let probe = ScanProbe(ReplayScanner(air))
            return (probe, { await probe.stop() })
        case .bluez:
            let bluez = try await MockedBlueZ.start()
            let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
            for advertisement in air {
                let path = try await bluez.mock.addDevice(advertisement.address.description)
                let beacon = try IBeacon(advertisingData: AdvertisingData(parsing: advertisement.data))
                try await bluez.mock.advertise(path, rssi: Int16(advertisement.rssi!),
                                               manufacturerData: [0x004C: beacon.manufacturerData])
            }
            return (probe, { await probe.stop(); bluez.stop() })
        case .hci:
            let fake = FakeController()
            let folder = NSTemporaryDirectory() + "npconf-\(UUID().uuidString.prefix(8))"
            let probe = ScanProbe(HCIScanner(controller: fake.controller, options: HCIOptions(stateDirectory: folder, bluetoothdIsRunning: { false })))
            guard await fake.waitForCommands({ $0.contains(.leSetScanEnable) }) else {
                throw TestEnvironmentError("the HCI scanner never enabled scanning on the fake controller")
            }
            for advertisement in air {
                fake.send(HCIEvents.legacy([(3, advertisement.address.description, Int8(advertisement.rssi!), advertisement.data)]))
            }
            return (probe, {
                await probe.stop()
                fake.stop()
                try? FileManager.default.removeItem(atPath: folder)
            })
        case .sim:
            // No noise or loss, and each beacon where the log-distance model (n = 2, −59 dBm at
            // 1 m) gives its RSSI exactly: 10^((−59 − rssi) / 20) metres away.
            let beacons = try air.enumerated().map { index, advertisement in
                let frame = try IBeacon(advertisingData: AdvertisingData(parsing: advertisement.data))
                let metres = pow(10, Double(-59 - advertisement.rssi!) / 20)
                return AirScenario.Beacon(name: "beacon\(index)", frame: frame,
                                          waypoints: [.init(time: 0, x: metres, y: 0)], address: advertisement.address)
            }
            let scenario = AirScenario(sigma: 0, loss: 0, devices: ["probe": .init(waypoints: [.init(time: 0, x: 0, y: 0)])],
                                       beacons: beacons)
            let path = "/tmp/npconf-\(UUID().uuidString.prefix(8))/air.sock"
            let hub = try SimulatedAirHub(scenario: scenario, socketPath: path)
            let running = Task { try await hub.run() }
            let probe = ScanProbe(SimulatedAirScanner(socketPath: path, device: "probe"))
            return (probe, {
                await probe.stop()
                running.cancel()
                _ = await running.result
                rmdir((path as NSString).deletingLastPathComponent)
            })
        }
    }

    @Test(arguments: Backend.allCases)
    func yieldsEachBeaconWithItsAddressSignalAndAdvertisingData(backend: Backend) async throws {
        let (probe, stop) = try await Self.start(backend)
        for expected in Self.air {
            let seen = await probe.first {
                $0.address == expected.address && $0.rssi == expected.rssi && $0.data == expected.data
            }
            #expect(seen != nil, "\(backend): \(expected.address) at \(expected.rssi!) dBm with \(expected.data)")
            #expect(seen.flatMap(Sighting.init)?.identity == Sighting(expected)?.identity)
        }
        await stop()
        #expect(probe.error == nil)
    }

    @Test(arguments: Backend.allCases)
    func timesAdvertisementsFromTheStartOfTheScan(backend: Backend) async throws {
        let (probe, stop) = try await Self.start(backend)
        _ = await probe.first { $0.address == Self.air[1].address }
        await stop()
        let times = probe.all.map(\.time)
        #expect(!times.isEmpty)
        #expect(times.allSatisfy { $0 >= 0 && $0 < 60 })
        #expect(times == times.sorted())
    }
}

@Suite struct ReplayScannerTests {
    @Test func pacesAdvertisementsByTheirRecordedTimes() async throws {
        let recording = [0.0, 0.2, 0.4].map {
            Beacons.advertisement(Beacons.first, Beacons.firstAddress, rssi: -60, time: $0)
        }
        let before = ContinuousClock.now
        var arrivals: [Duration] = []
        try await ReplayScanner(recording, pacing: .recorded(speed: 2)).scan { _ in arrivals.append(before.duration(to: .now)) }
        #expect(arrivals.count == 3)
        // At double speed each comes no earlier than half its recorded time (late is allowed:
        // a delayed replay catches up rather than drifting).
        for (arrival, due) in zip(arrivals, [0.0, 0.1, 0.2]) {
            #expect(arrival >= .seconds(due))
        }
        #expect(arrivals.last! >= .milliseconds(200))
    }

    @Test(.timeLimit(.minutes(5))) func replaysImmediatelyWithoutPacing() async throws {
        let recording = [0.0, 50.0, 100.0].map {
            Beacons.advertisement(Beacons.first, Beacons.firstAddress, rssi: -60, time: $0)
        }
        var times: [Double] = []
        try await ReplayScanner(recording).scan { times.append($0.time) }
        #expect(times == [0.0, 50.0, 100.0], "recorded times are kept, nothing waits 100 s")
    }
}
