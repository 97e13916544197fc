import BeaconFrames
import BusTestSupport
import DBus
import Radio
import Logging
import Synchronization
import Testing

/// The BlueZ advertiser against the mock, which reads the advertisement back from our exported
/// object with Properties.GetAll, as bluetoothd does.
/// One test at a time: each starts a bus and a Python mock, and the machine is shared.
@Suite(.serialized) struct BlueZAdvertiserTests {
    static let beacon = IBeacon(uuid: Beacons.uuid, major: 7, minor: 42, measuredPower: -59)
    static let payload = AdvertisingPayload(manufacturerData: [0x004C: beacon.manufacturerData])

    /// Starts advertising in the background; returns the task.
    static func advertise(on bluez: MockedBlueZ, adapter: String? = nil, grace: Duration = .seconds(10)) -> Task<Void, any Error> {
        var advertiser = BlueZAdvertiser(adapterName: adapter, busAddress: bluez.address)
        advertiser.advertisingManagerGrace = grace
        return Task { try await advertiser.advertise(payload) }
    }

    static func waitForRegistration(_ bluez: MockedBlueZ, within timeout: Duration = .seconds(60))
        async throws -> (sender: String, path: String, properties: [String: DBusValue])?
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let registered = try await bluez.mock.registeredAdvertisement() { return registered }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func registersABroadcastWithExactlyTheIBeaconBytes() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez)
        defer { task.cancel() }
        let registered = try #require(try await Self.waitForRegistration(bluez))
        #expect(registered.path == BlueZAdvertiser.objectPath.rawValue)
        let properties = registered.properties
        #expect(Set(properties.keys) == ["Type", "ManufacturerData", "MinInterval", "MaxInterval"])
        #expect(properties["Type"] == .string("broadcast"))
        #expect(properties["MinInterval"] == .uint32(100))
        #expect(properties["MaxInterval"] == .uint32(100))
        let manufacturerData = try #require(properties["ManufacturerData"]?.dictionaryValue)
        #expect(manufacturerData.count == 1)
        #expect(manufacturerData.first?.key == .uint16(0x004C))
        // 02 15, the UUID, major 7, minor 42, power -59 (0xC5).
        let expected: [UInt8] = [0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x00, 0x07, 0x00, 0x2A, 0xC5]
        #expect(manufacturerData.first?.value.bytesValue == expected)
        // What a scanner would then decode from the air.
        #expect(Sighting(Advertisement(time: 0, address: BluetoothAddress("00:01:02:03:04:05")!, rssi: -50,
                                       data: Self.payload.advertisingData))?.identity == Self.beacon.identity)
    }

    @Test func unregistersWhenCancelled() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez)
        #expect(try await Self.waitForRegistration(bluez) != nil)
        task.cancel()
        try await task.value
        #expect(try await bluez.mock.registeredAdvertisement() == nil)
    }

    @Test func reportsNoFreeAdvertisingInstanceClearly() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.setAdvertisingLimit(0)
        let task = Self.advertise(on: bluez)
        let error = await #expect(throws: RadioError.self) { try await task.value }
        #expect(error?.code == .noFreeAdvertisingInstance)
        #expect((error?.cause as? DBusError)?.name == "org.bluez.Error.NotPermitted")
        #expect(error?.message.contains("hci0 has no free advertising instance") == true)
        #expect(error?.message.contains("bluetoothctl advertise off") == true)
    }

    @Test func registersAgainAfterBlueZReleasesTheAdvertisement() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez)
        defer { task.cancel() }
        let first = try #require(try await Self.waitForRegistration(bluez))
        try await bluez.mock.releaseAdvertisements()
        let again = try #require(try await Self.waitForRegistration(bluez))
        #expect(again.sender == first.sender)
        #expect(again.properties == first.properties)
    }

    /// bluetoothd crashing and coming back: the advertisement is registered again within 2 s.
    @Test func registersAgainAfterTheBluetoothServiceRestarts() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez)
        defer { task.cancel() }
        #expect(try await Self.waitForRegistration(bluez) != nil)
        bluez.mock.kill()
        try await bluez.mock.start()
        try await bluez.mock.addAdapter("hci0")
        let again = try await Self.waitForRegistration(bluez, within: .seconds(30))
        #expect(again?.properties["Type"] == .string("broadcast"))
    }

    /// As the real bluetoothd 5.66 does after `systemctl restart bluetooth` (scripts/test-real-stack):
    /// the named adapter comes back powered off, and LEAdvertisingManager1 a moment after Adapter1.
    /// That is waited for, not taken as "this adapter cannot advertise".
    @Test func registersAgainWhenTheAdvertisingManagerComesAfterTheAdapter() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez, adapter: "hci0", grace: .seconds(1))
        defer { task.cancel() }
        #expect(try await Self.waitForRegistration(bluez) != nil)
        bluez.mock.kill()
        try await bluez.mock.start()
        try await bluez.mock.addAdapterAsAfterRestart("hci0")
        // Longer than the grace: this adapter advertised before, so it is waited for.
        try await Task.sleep(for: .seconds(2))
        try await bluez.mock.addAdvertisingManager("hci0")
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bluez.mock.registeredAdvertisement() == nil, "not registered while the adapter is off")
        try await bluez.mock.setPowered(true)
        let again = try await Self.waitForRegistration(bluez, within: .seconds(30))
        #expect(again?.properties["Type"] == .string("broadcast"))
        task.cancel()
        // It was still running (not ended by an error) when it was cancelled.
        await #expect(throws: Never.self) { try await task.value }
    }

    /// A named adapter that never gains LEAdvertisingManager1 (BR/EDR only, or an old BlueZ):
    /// after the grace the advertiser says so, rather than waiting for ever.
    @Test func saysWhenANamedAdapterCannotAdvertise() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.removeAdapter("hci0")
        try await bluez.mock.addAdapterAsAfterRestart("hci0")
        try await bluez.mock.setPowered(true)
        let task = Self.advertise(on: bluez, adapter: "hci0", grace: .seconds(1))
        await #expect { try await task.value } throws: { error in
            (error as? RadioError)?.code == .adapterUnusable
                && (error as? RadioError)?.message.contains("cannot advertise through BlueZ (no LEAdvertisingManager1") == true
        }
    }

    /// Powered off and on (`bluetoothctl power off`, rfkill): the kernel dropped the instance and
    /// bluetoothd does not restore it, so the advertiser registers again.
    @Test func isOnTheAirAgainAfterThePowerCycle() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let task = Self.advertise(on: bluez)
        defer { task.cancel() }
        #expect(try await Self.waitForRegistration(bluez) != nil)
        #expect(try await bluez.mock.advertisementsOnAir().count == 1)
        try await bluez.mock.setPowered(false)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bluez.mock.advertisementsOnAir().isEmpty)
        try await bluez.mock.setPowered(true)
        let deadline = ContinuousClock.now + .seconds(30)
        while try await bluez.mock.advertisementsOnAir().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await bluez.mock.advertisementsOnAir().count == 1, "registered again once powered on")
    }

    static func payload(minor: UInt16) -> AdvertisingPayload {
        AdvertisingPayload(manufacturerData: [0x004C: IBeacon(uuid: Beacons.uuid, major: 7, minor: minor, measuredPower: -59).manufacturerData])
    }

    static func minor(_ properties: [String: DBusValue]) -> UInt16? {
        guard let bytes = properties["ManufacturerData"]?.dictionaryValue?.first?.value.bytesValue, bytes.count == 23 else { return nil }
        return UInt16(bytes[20]) << 8 | UInt16(bytes[21])
    }

    /// Each new identity: the old advertisement unregistered, then the new one registered on the
    /// same connection and path, never both at once; bluetoothd (here its model) then sends each
    /// from a new address.
    @Test func rotatesByUnregisteringAndRegisteringAgain() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let advertiser = BlueZAdvertiser(busAddress: bluez.address)
        let task = Task { try await advertiser.advertise(rotating: payloads) }
        defer { task.cancel() }
        for minor in UInt16(1)...3 {
            next.yield(Self.payload(minor: minor))
            let deadline = ContinuousClock.now + .seconds(30)
            while try await bluez.mock.registeredAdvertisement().flatMap({ Self.minor($0.properties) }) != minor {
                guard ContinuousClock.now < deadline else { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await bluez.mock.registeredAdvertisement().flatMap { Self.minor($0.properties) } == minor)
        }
        // The same payload again changes nothing.
        next.yield(Self.payload(minor: 3))
        try await Task.sleep(for: .milliseconds(300))
        let log = try await bluez.mock.advertisingLog()
        #expect(log.map(\.event) == ["register", "unregister", "register", "unregister", "register"], "\(log.map(\.event))")
        #expect(Set(log.map(\.path)) == [BlueZAdvertiser.objectPath.rawValue])
        let registrations = log.filter { $0.event == "register" }
        #expect(registrations.map { Self.minor($0.properties) } == [1, 2, 3])
        #expect(registrations.allSatisfy { $0.properties["Type"] == .string("broadcast") })
        let addresses = registrations.compactMap { BluetoothAddress($0.address) }
        #expect(Set(addresses).count == 3 && addresses.allSatisfy { $0.randomKind == .nonResolvablePrivate })
        task.cancel()
        try await task.value
        #expect(try await bluez.mock.advertisingLog().last?.event == "unregister")
        #expect(try await bluez.mock.registeredAdvertisement() == nil)
    }

    /// On a discoverable adapter the kernel advertises from the public address (the real stack
    /// showed it): rotating identities are then linkable, and the advertiser says so, once.
    @Test func warnsWhenTheAdapterAdvertisesFromItsPublicAddress() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let adapter: DBusObjectPath = "/org/bluez/hci0"
        try await bluez.mock.update(adapter, interface: "org.bluez.Adapter1", [("Discoverable", .boolean(true))])
        let logs = CapturedLogs()
        let advertiser = BlueZAdvertiser(busAddress: bluez.address, logger: Logger(label: "test") { _ in logs })
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let task = Task { try await advertiser.advertise(rotating: payloads) }
        defer { task.cancel() }
        for minor in UInt16(1)...2 {
            next.yield(Self.payload(minor: minor))
            let deadline = ContinuousClock.now + .seconds(30)
            while try await bluez.mock.registeredAdvertisement().flatMap({ Self.minor($0.properties) }) != minor, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let warnings = logs.lines.filter { $0.level == .warning && $0.message.contains("public address") }
        #expect(warnings.count == 1, "\(logs.lines)")
        #expect(warnings.first?.message.contains("bluetoothctl discoverable off") == true)
        task.cancel()
        try await task.value
    }

    /// A payload that comes while the adapter is off is the one registered when it is back on.
    @Test func aRotationWhileOffRegistersTheNewPayloadWhenOn() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.setPowered(false)
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let task = Task { try await BlueZAdvertiser(busAddress: bluez.address).advertise(rotating: payloads) }
        defer { task.cancel() }
        next.yield(Self.payload(minor: 1))
        next.yield(Self.payload(minor: 2))
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bluez.mock.registeredAdvertisement() == nil)
        try await bluez.mock.setPowered(true)
        let registered = try #require(try await Self.waitForRegistration(bluez))
        #expect(Self.minor(registered.properties) == 2)
        #expect(try await bluez.mock.advertisingLog().count == 1)
    }

    @Test func waitsForAnAdapterThatIsOffThenAdvertises() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.setPowered(false)
        let task = Self.advertise(on: bluez)
        defer { task.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bluez.mock.registeredAdvertisement() == nil)
        try await bluez.mock.setPowered(true)
        #expect(try await Self.waitForRegistration(bluez) != nil)
    }
}

/// A log handler that keeps every line, for tests that read what was said.
final class CapturedLogs: LogHandler, @unchecked Sendable {
    struct Line: Sendable { var level: Logger.Level; var message: String }
    private let stored = Mutex<[Line]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var lines: [Line] { stored.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        stored.withLock { $0.append(Line(level: level, message: message.description)) }
    }
}
