import BeaconFrames
import BusTestSupport
import DBus
import Radio
import Ranging
import Testing

/// The BlueZ scanner against python-dbusmock's bluez5 template on a private bus.
/// One test at a time: each starts a bus and a Python mock, and the machine is shared.
@Suite(.serialized) struct BlueZScannerTests {
    static let apple: UInt16 = 0x004C

    @Test func asksForLEDiscoveryWithDuplicatesAndAnRSSIThreshold() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let probe = ScanProbe(BlueZScanner(rssiThreshold: -95, busAddress: bluez.address))
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -60, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first { $0.rssi == -60 } != nil)
        let adapter = try await bluez.mock.adapterProperties()
        #expect(adapter["Discovering"] == .boolean(true))
        let filter = adapter["DiscoveryFilter"]?.stringKeyedValue
        #expect(filter?["Transport"] == .string("le"))
        #expect(filter?["DuplicateData"] == .boolean(true))
        #expect(filter?["RSSI"] == .int16(-95))
        await probe.stop()
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(false), "discovery stopped on exit")
    }

    @Test func dropsUpdatesBelowItsOwnThresholdEvenWhenBlueZReportsThem() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let probe = ScanProbe(BlueZScanner(rssiThreshold: -80, busAddress: bluez.address))
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -90, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        try await bluez.mock.advertise(path, rssi: -70, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first { $0.rssi == -70 } != nil)
        #expect(!probe.all.contains { ($0.rssi ?? 0) < -80 })
        await probe.stop()
    }

    /// Sightings from BlueZ drive ranging to enter, range and exit, for a device known before
    /// discovery started and for one that appears later.
    @Test func producesEnterRangeAndExitEventsForBeaconsWithChangingSignal() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let early = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(early, rssi: -70, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
        #expect(await probe.first { $0.rssi == -70 } != nil, "a device present before discovery is reported")
        for rssi: Int16 in [-65, -60, -55] {
            try await bluez.mock.advertise(early, rssi: rssi, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        }
        let late = try await bluez.mock.addDevice(Beacons.secondAddress)
        try await bluez.mock.advertise(late, rssi: -80, manufacturerData: [Self.apple: Beacons.second.manufacturerData])
        #expect(await probe.first { $0.rssi == -55 } != nil)
        #expect(await probe.first { $0.rssi == -80 } != nil, "a device that appears after discovery started is reported")
        await probe.stop()

        var tracker = ProximityTracker(configuration: RangingConfiguration(rangeInterval: 0))
        var events: [ProximityEvent] = []
        for sighting in probe.all.compactMap(Sighting.init) { tracker.observe(sighting, into: &events) }
        tracker.finish(into: &events)
        let first = events.filter { $0.identity == Beacons.first.identity }
        let second = events.filter { $0.identity == Beacons.second.identity }
        #expect(first.first?.kind == .enter)
        #expect(first.last?.kind == .exit)
        #expect(first.filter { $0.kind == .range }.map(\.rssi).suffix(3) == [-65, -60, -55])
        let ranges = first.filter { $0.kind == .range }
        #expect(ranges.last!.filteredRSSI! > ranges.first!.filteredRSSI!, "the filtered signal follows the rising RSSI")
        #expect(second.map(\.kind) == [.enter, .range, .exit])
        #expect(second.first?.address == BluetoothAddress(Beacons.secondAddress))
    }

    @Test func waitsForAPoweredOffAdapterAndScansOnceItIsOn() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.setPowered(false)
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(false))
        try await bluez.mock.setPowered(true)
        try await bluez.mock.advertise(path, rssi: -61, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first(within: .seconds(30)) { $0.rssi == -61 } != nil)
        await probe.stop()
    }

    /// bluetoothd crashing and coming back: the scan resumes within 2 s of the new service.
    @Test func resumesScanningAfterTheBluetoothServiceRestarts() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -60, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first { $0.rssi == -60 } != nil)

        bluez.mock.kill()
        try await bluez.mock.start()
        try await bluez.mock.addAdapter("hci0")
        let again = try await bluez.mock.addDevice(Beacons.firstAddress)
        let before = probe.all.count
        let restarted = ContinuousClock.now
        // A real bluetoothd reports every advertisement; repeat until the scanner is back.
        var seen: Advertisement?
        while seen == nil, restarted.duration(to: .now) < .seconds(30) {
            try await bluez.mock.advertise(again, rssi: -52, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
            seen = await probe.first(after: before, within: .milliseconds(100)) { $0.rssi == -52 }
        }
        #expect(seen != nil, "scanning came back (within 2 s when idle: the BlueZ soak measures it)")
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true))
        await probe.stop()
    }

    @Test func reconnectsWhenTheBusConnectionIsLost() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -60, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first { $0.rssi == -60 } != nil)

        try await bluez.bus.restart()
        try await bluez.mock.restartOnNewBus()
        try await bluez.mock.addAdapter("hci0")
        let again = try await bluez.mock.addDevice(Beacons.firstAddress)
        let before = probe.all.count
        let restarted = ContinuousClock.now
        var seen: Advertisement?
        while seen == nil, restarted.duration(to: .now) < .seconds(30) {
            try await bluez.mock.advertise(again, rssi: -47, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
            seen = await probe.first(after: before, within: .milliseconds(200)) { $0.rssi == -47 }
        }
        #expect(seen != nil, "scanning resumed on the new bus connection")
        #expect(probe.error == nil)
        await probe.stop()
    }

    @Test func resumesScanningWhenTheAdapterIsRemovedAndAddedAgain() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let probe = ScanProbe(BlueZScanner(busAddress: bluez.address))
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -60, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first { $0.rssi == -60 } != nil)

        try await bluez.mock.removeAdapter("hci0")
        try await Task.sleep(for: .milliseconds(200))
        try await bluez.mock.addAdapter("hci0")
        let again = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(again, rssi: -48, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        #expect(await probe.first(within: .seconds(30)) { $0.rssi == -48 } != nil)
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true))
        await probe.stop()
    }

    @Test func reportsAPolicyDenialWithWhatToDo() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.makeFail("StartDiscovery", interface: "org.bluez.Adapter1", path: "/org/bluez/hci0",
                                      errorName: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message")
        let error = await #expect(throws: RadioError.self) {
            try await BlueZScanner(busAddress: bluez.address).scan { _ in }
        }
        #expect(error?.code == .permissionDenied)
        #expect(error?.message.contains("sudo usermod -aG bluetooth $USER") == true)
    }

    @Test func scansWithTheNamedAdapterOnly() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.addAdapter("hci1")
        let probe = ScanProbe(BlueZScanner(adapterName: "hci1", busAddress: bluez.address))
        let onFirst = try await bluez.mock.addDevice(Beacons.firstAddress, adapter: "hci0")
        let onSecond = try await bluez.mock.addDevice(Beacons.secondAddress, adapter: "hci1")
        try await bluez.mock.advertise(onFirst, rssi: -40, manufacturerData: [Self.apple: Beacons.first.manufacturerData])
        try await bluez.mock.advertise(onSecond, rssi: -41, manufacturerData: [Self.apple: Beacons.second.manufacturerData])
        #expect(await probe.first { $0.rssi == -41 } != nil)
        #expect(!probe.all.contains { $0.rssi == -40 })
        #expect(try await bluez.mock.adapterProperties("hci1")["Discovering"] == .boolean(true))
        #expect(try await bluez.mock.adapterProperties("hci0")["Discovering"] == .boolean(false))
        await probe.stop()
    }
}
