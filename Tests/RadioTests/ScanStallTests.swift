import BeaconFrames
import BusTestSupport
import DBus
import Radio
import Synchronization
import Testing

@Suite struct ScanStallDetectorTests {
    /// 10 advertisements a second for 10 s, from t = 0.
    func busy() -> ScanStallDetector {
        var detector = ScanStallDetector(.init(window: 30, minimumAdvertisements: 20, expectedGaps: 20, minimumSilence: 5))
        for tenth in 0..<100 { detector.advertisement(at: Double(tenth) / 10) }
        return detector
    }

    @Test func restartsDiscoveryThenCyclesPowerThenWaits() {
        var detector = busy()
        #expect(abs(detector.rate - 10) < 0.2)
        // The limit is max(5 s, 20 gaps of 0.1 s): 5 s after the last advertisement (t = 9.9).
        #expect(detector.check(at: 12) == nil)
        #expect(detector.check(at: 14.8) == nil)
        guard case .restartDiscovery(let silence, _) = detector.check(at: 15) else { Issue.record("no restart"); return }
        #expect(abs(silence - 5.1) < 0.01)
        #expect(detector.check(at: 16) == nil, "each action once")
        #expect(detector.check(at: 19.9) == nil)
        guard case .cyclePower = detector.check(at: 20.1) else { Issue.record("no power cycle"); return }
        #expect(detector.check(at: 60) == nil, "nothing more until advertisements come back")
        detector.advertisement(at: 61)
        #expect(detector.check(at: 62) == nil)
    }

    @Test func aQuietRoomIsNoStall() {
        var detector = ScanStallDetector(.init(window: 30, minimumAdvertisements: 20, expectedGaps: 20, minimumSilence: 5))
        // One beacon every 2 s: 15 in the window, fewer than 20.
        for step in 0..<15 { detector.advertisement(at: Double(step) * 2) }
        #expect(detector.check(at: 200) == nil)
    }

    @Test func theLimitFollowsTheRate() {
        var detector = ScanStallDetector(.init(window: 30, minimumAdvertisements: 20, expectedGaps: 20, minimumSilence: 5))
        // One a second for 30 s: a silence is implausible only past 20 s.
        for second in 0..<30 { detector.advertisement(at: Double(second)) }
        #expect(detector.check(at: 45) == nil)
        #expect(detector.check(at: 50) != nil)
    }

    @Test func silenceCountsFromADiscoveryStartedLater() {
        var detector = busy()
        // The adapter was off from 10 s to 100 s; discovery starts again at 100 s.
        detector.discoveryStarted(at: 100)
        #expect(detector.check(at: 104) == nil)
        #expect(detector.check(at: 105.5) != nil)
    }
}

/// The BlueZ scanner against a mock controller that stalls while discovery reads as on.
@Suite(.serialized) struct BlueZScanStallTests {
    static let apple: UInt16 = 0x004C

    /// A controller receiving the first beacon 20 times a second until stopped.
    final class Feeder: Sendable {
        let task: Task<Void, Never>
        init(_ mock: BlueZMock, _ device: DBusObjectPath) {
            task = Task {
                var rssi: Int16 = -60
                while !Task.isCancelled {
                    rssi = rssi == -60 ? -61 : -60
                    _ = try? await mock.receive(device, rssi: rssi, manufacturerData: [BlueZScanStallTests.apple: Beacons.first.manufacturerData])
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        deinit { task.cancel() }
    }

    static func waitFor(within timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    func scanner(_ bluez: MockedBlueZ) -> BlueZScanner {
        var scanner = BlueZScanner(busAddress: bluez.address)
        scanner.stallDetection = .init(window: 30, minimumAdvertisements: 10, expectedGaps: 10, minimumSilence: 1.5)
        scanner.stallCheckInterval = .milliseconds(200)
        return scanner
    }

    @Test(.timeLimit(.minutes(5))) func restartsDiscoveryWhenTheControllerFallsSilent() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let scanner = scanner(bluez)
        let probe = ScanProbe(scanner)
        let device = try await bluez.mock.addDevice(Beacons.firstAddress)
        let feeder = Feeder(bluez.mock, device)
        defer { feeder.task.cancel() }
        // Enough history for a rate: 20 advertisements (a generous wait: the mock feeds them slowly
        // while the whole suite starts).
        #expect(await probe.first(after: 19, within: .seconds(90)) { _ in true } != nil)
        try await bluez.mock.stall(until: .discovery)
        #expect(await Self.waitFor(within: .seconds(20)) { scanner.recoveries.discoveryRestartCount == 1 }, "the stall was noticed")
        // Only a discovery started again ends this stall.
        #expect(await probe.first(after: probe.all.count, within: .seconds(20)) { _ in true } != nil, "advertisements came back")
        let state = try await bluez.mock.stallState()
        #expect(!state.stalled)
        #expect(state.discoveryStarts >= 2)
        #expect(state.powerOffs == 0)
        #expect(scanner.recoveries.discoveryRestartCount == 1)
        #expect(scanner.recoveries.powerCycleCount == 0)
        await probe.stop()
    }

    @Test(.timeLimit(.minutes(5))) func cyclesThePowerWhenRestartingDiscoveryDoesNotHelp() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let scanner = scanner(bluez)
        let probe = ScanProbe(scanner)
        let device = try await bluez.mock.addDevice(Beacons.firstAddress)
        let feeder = Feeder(bluez.mock, device)
        defer { feeder.task.cancel() }
        #expect(await probe.first(after: 19, within: .seconds(90)) { _ in true } != nil)
        try await bluez.mock.stall(until: .power)
        #expect(await Self.waitFor(within: .seconds(30)) { scanner.recoveries.powerCycleCount == 1 }, "the power was cycled")
        #expect(await probe.first(after: probe.all.count, within: .seconds(20)) { _ in true } != nil, "advertisements came back")
        let state = try await bluez.mock.stallState()
        #expect(!state.stalled)
        #expect(state.powerOffs == 1)
        #expect(scanner.recoveries.discoveryRestartCount == 1)
        #expect(scanner.recoveries.powerCycleCount == 1)
        #expect(try await bluez.mock.adapterProperties()["Powered"] == .boolean(true), "the adapter is back on")
        await probe.stop()
    }
}
