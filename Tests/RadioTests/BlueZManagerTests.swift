import BeaconFrames
import BusTestSupport
import DBus
import Radio
import Testing

/// One ``BlueZManager`` shared by a scanner and an advertiser, as the agent runs them: one bus
/// connection for both, and both back after bluetoothd or the bus restarts.
/// One test at a time: each starts a bus and a Python mock, and the machine is shared.
@Suite(.serialized) struct BlueZManagerTests {
    static let apple: UInt16 = 0x004C

    /// The unique names (connections) on the bus.
    static func connections(_ observer: DBusConnection) async throws -> Set<String> {
        let reply = try await observer.call(destination: DBusConnection.busName, path: DBusConnection.busPath,
                                            interface: DBusConnection.busName, member: "ListNames")
        return Set((reply.first?.arrayValue ?? []).compactMap(\.stringValue).filter { $0.hasPrefix(":") })
    }

    /// Advertises `rssi` for the first beacon until the probe sees it (a real bluetoothd reports
    /// every advertisement, so repeating is what the air does); the advertisement, or nil.
    static func sighting(_ rssi: Int16, of device: DBusObjectPath, by probe: ScanProbe, on bluez: MockedBlueZ,
                         within timeout: Duration) async throws -> Advertisement? {
        let before = probe.all.count
        let start = ContinuousClock.now
        while start.duration(to: .now) < timeout {
            try await bluez.mock.advertise(device, rssi: rssi, manufacturerData: [apple: Beacons.first.manufacturerData])
            if let seen = await probe.first(after: before, within: .milliseconds(100), where: { $0.rssi == Int(rssi) }) {
                return seen
            }
        }
        return nil
    }

    @Test func aScannerAndAnAdvertiserShareOneConnectionAndBothComeBackAfterBluetoothdRestarts() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let observer = try await bluez.bus.connect()
        defer { observer.close() }
        let before = try await Self.connections(observer)

        let manager = BlueZManager(busAddress: bluez.address)
        let probe = ScanProbe(BlueZScanner(manager: manager, rssiThreshold: -100))
        let advertiser = BlueZAdvertiser(manager: manager)
        let advertising = Task { try await advertiser.advertise(BlueZAdvertiserTests.payload) }
        defer { advertising.cancel() }

        let device = try await bluez.mock.addDevice(Beacons.firstAddress)
        #expect(try await Self.sighting(-60, of: device, by: probe, on: bluez, within: .seconds(10)) != nil)
        let registered = try #require(try await BlueZAdvertiserTests.waitForRegistration(bluez))
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true))
        let ours = try await Self.connections(observer).subtracting(before)
        #expect(ours == [registered.sender], "one connection serves both, and it is the one that registered")
        #expect(await manager.uniqueName == registered.sender)
        #expect(await manager.connectionsOpened == 1)
        #expect(try await bluez.mock.adapterProperties()["DiscoveryFilter"]?.stringKeyedValue?["RSSI"] == .int16(-100))

        bluez.mock.kill()
        try await bluez.mock.start()
        try await bluez.mock.addAdapter("hci0")
        let again = try await bluez.mock.addDevice(Beacons.firstAddress)
        #expect(try await Self.sighting(-52, of: again, by: probe, on: bluez, within: .seconds(30)) != nil,
                "scanning came back")
        let reregistered = try #require(try await BlueZAdvertiserTests.waitForRegistration(bluez, within: .seconds(30)),
                                        "advertising came back")
        #expect(reregistered.sender == registered.sender, "on the same connection")
        #expect(reregistered.properties == registered.properties)
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true))
        let mock = try #require(try await observer.nameOwner(of: "org.bluez"))
        #expect(try await Self.connections(observer).subtracting(before).subtracting([mock]) == [registered.sender])
        #expect(await manager.connectionsOpened == 1)

        // The scanner leaving stops discovery but leaves the advertiser's connection alone, and
        // the advertiser's task takes over reading the bus (the scanner's task usually reads it).
        await probe.stop()
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(false))
        #expect(try await bluez.mock.registeredAdvertisement()?.sender == registered.sender)
        bluez.mock.kill()
        try await bluez.mock.start()
        try await bluez.mock.addAdapter("hci0")
        #expect(try await BlueZAdvertiserTests.waitForRegistration(bluez, within: .seconds(30))?.sender == registered.sender,
                "the advertiser alone follows bluetoothd's return")
        // The last one out withdraws its advertisement and closes the connection.
        advertising.cancel()
        try await advertising.value
        #expect(try await bluez.mock.registeredAdvertisement() == nil)
        let deadline = ContinuousClock.now + .seconds(5)
        while try await Self.connections(observer).contains(registered.sender), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await !Self.connections(observer).contains(registered.sender), "the connection closed")
        #expect(probe.error == nil)
    }

    @Test func bothComeBackOnOneNewConnectionWhenTheBusRestarts() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let manager = BlueZManager(busAddress: bluez.address)
        let probe = ScanProbe(BlueZScanner(manager: manager))
        let advertiser = BlueZAdvertiser(manager: manager)
        let advertising = Task { try await advertiser.advertise(BlueZAdvertiserTests.payload) }
        defer { advertising.cancel() }
        let device = try await bluez.mock.addDevice(Beacons.firstAddress)
        #expect(try await Self.sighting(-60, of: device, by: probe, on: bluez, within: .seconds(10)) != nil)
        #expect(try await BlueZAdvertiserTests.waitForRegistration(bluez) != nil)

        try await bluez.bus.restart()
        try await bluez.mock.restartOnNewBus()
        try await bluez.mock.addAdapter("hci0")
        let observer = try await bluez.bus.connect()
        defer { observer.close() }
        let again = try await bluez.mock.addDevice(Beacons.firstAddress)
        #expect(try await Self.sighting(-47, of: again, by: probe, on: bluez, within: .seconds(30)) != nil)
        let registered = try #require(try await BlueZAdvertiserTests.waitForRegistration(bluez, within: .seconds(30)))
        #expect(await manager.uniqueName == registered.sender)
        #expect(await manager.connectionsOpened == 2, "one reconnection, shared")
        let mock = try #require(try await observer.nameOwner(of: "org.bluez"))
        let others = try await Self.connections(observer).subtracting([mock, observer.uniqueName])
        // What is left is ours and the mock's control connection.
        #expect(others.count == 2 && others.contains(registered.sender), "\(others)")
        await probe.stop()
        #expect(probe.error == nil)
    }
}
