import BeaconFrames
import BusTestSupport
import DBus
import Foundation
import Testing

/// The radio commands of the built `nearplay`, against the BlueZ mock through
/// DBUS_SYSTEM_BUS_ADDRESS, as a user would run them.
/// One test at a time: each starts a bus and a Python mock, and the machine is shared.
@Suite(.serialized) struct RadioCLITests {
    static var executable: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("nearplay")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return repositoryRoot.appendingPathComponent(".build/debug/nearplay").path
    }

    /// A running `nearplay`; its output is read once it has exited.
    final class Command: @unchecked Sendable {
        let process: SpawnedProcess

        init(_ arguments: [String], bus: String) throws {
            guard FileManager.default.isExecutableFile(atPath: RadioCLITests.executable) else {
                throw TestEnvironmentError("nearplay is not built at \(RadioCLITests.executable): run `swift build` (scripts/test does)")
            }
            process = try SpawnedProcess(RadioCLITests.executable, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus])
        }

        /// Sends SIGINT, as Ctrl-C does, and waits for the exit.
        func interrupt() async -> (status: Int32, stdout: String, stderr: String) {
            await process.interrupt(with: SIGINT)
        }

        /// Waits for the exit without holding one of the few threads that run the tests' tasks.
        func finish() async -> (status: Int32, stdout: String, stderr: String) {
            await process.finish()
        }
    }

    @Test func adaptersListsPowerAndFreeAdvertisingInstances() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.addAdapter("hci1")
        try await bluez.mock.setPowered(false, adapter: "hci1")
        let run = try await Command(["adapters"], bus: bluez.address).finish()
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("hci0      00:01:02:03:04:05  yes"))
        #expect(lines[1].hasSuffix("5 free, 0 in use"))
        #expect(lines[2].hasPrefix("hci1      01:02:03:04:05:06  no"))
        #expect(run.stderr.contains("bluetoothctl power on"))
    }

    @Test func adaptersSaysWhenTheBluetoothServiceIsNotRunning() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let run = try await Command(["adapters"], bus: bus.address).finish()
        #expect(run.status == 69)
        #expect(run.stderr.contains("bluetoothd) is not running: start it with `sudo systemctl start bluetooth`"))
    }

    /// No bus at all: Radio's own error (the CLI knows no D-Bus), saying what to check.
    @Test func adaptersSaysWhenThereIsNoBus() async throws {
        let folder = try TemporaryFolder()
        let address = "unix:path=\(folder.path)/no-bus"
        let run = try await Command(["adapters"], bus: address).finish()
        #expect(run.status == 69)
        #expect(run.stderr.contains("Cannot use the D-Bus system bus at \(address): is dbus running? Set DBUS_SYSTEM_BUS_ADDRESS"),
                "\(run.stderr)")
    }

    @Test func scanStreamsEnterAndRangeEventsAsJSONAndStopsDiscoveryOnInterrupt() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let path = try await bluez.mock.addDevice(Beacons.firstAddress)
        try await bluez.mock.advertise(path, rssi: -59, manufacturerData: [0x004C: Beacons.first.manufacturerData])
        let scan = try Command(["scan", "--json"], bus: bluez.address)
        try await waitUntil { try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true) }
        try await bluez.mock.advertise(path, rssi: -61, manufacturerData: [0x004C: Beacons.first.manufacturerData])
        try await Task.sleep(for: .milliseconds(300))
        let run = await scan.interrupt()
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix(#"{"t":"#) == true)
        #expect(lines.first?.hasSuffix(#","event":"enter","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-59}"#) == true)
        #expect(lines.contains { $0.contains(#""event":"range""#) && $0.contains(#""zone":"near""#) })
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(false), "discovery stopped on Ctrl-C")
    }

    @Test func recordWritesATraceOfEverythingScanned() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let file = bluez.bus.directory.appendingPathComponent("recorded.jsonl").path
        let record = try Command(["record", file], bus: bluez.address)
        try await waitUntil { try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true) }
        let path = try await bluez.mock.addDevice(Beacons.secondAddress)
        try await bluez.mock.advertise(path, rssi: -70, manufacturerData: [0x004C: Beacons.second.manufacturerData])
        try await Task.sleep(for: .milliseconds(300))
        let run = await record.interrupt()
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix(#"{"nearplay_trace":1,"created":""#) == true)
        let ad = Beacons.second.advertisingData(includeFlags: false).map { String(format: "%02x", $0) }.joined()
        #expect(lines.dropFirst().contains { $0.hasSuffix(#","addr":"C0:FF:EE:00:00:02","rssi":-70,"ad":"\#(ad)","addr_type":"public"}"#) })
        #expect(run.stderr.contains("Recorded"))
    }

    @Test func advertiseRegistersUntilInterruptedThenWithdraws() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let advertise = try Command(["advertise", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "7",
                                     "--minor", "42"], bus: bluez.address)
        try await waitUntil { try await bluez.mock.registeredAdvertisement() != nil }
        let registered = try await bluez.mock.registeredAdvertisement()
        #expect(registered?.properties["ManufacturerData"]?.dictionaryValue?.first?.value.bytesValue
            == IBeacon(uuid: Beacons.uuid, major: 7, minor: 42, measuredPower: -59).manufacturerData)
        let run = await advertise.interrupt()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try await bluez.mock.registeredAdvertisement() == nil, "withdrawn on Ctrl-C")
    }

    /// Negative values after a space, as people type them, reach BlueZ; SIGTERM (what systemd
    /// sends) stops scanning and advertising as cleanly as Ctrl-C.
    @Test func negativeValuesAfterASpaceReachBlueZAndSIGTERMStopsCleanly() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        let scan = try Command(["scan", "--json", "--rssi-threshold", "-90"], bus: bluez.address)
        try await waitUntil { try await bluez.mock.adapterProperties()["Discovering"] == .boolean(true) }
        #expect(try await bluez.mock.adapterProperties()["DiscoveryFilter"]?.stringKeyedValue?["RSSI"] == .int16(-90))
        scan.process.signal(SIGTERM)
        let scanned = await scan.finish()
        #expect(scanned.status == 0, "\(scanned.stderr)")
        #expect(try await bluez.mock.adapterProperties()["Discovering"] == .boolean(false), "discovery stopped on SIGTERM")

        let advertise = try Command(["advertise", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "7",
                                     "--minor", "42", "--power", "-65"], bus: bluez.address)
        try await waitUntil { try await bluez.mock.registeredAdvertisement() != nil }
        #expect(try await bluez.mock.registeredAdvertisement()?.properties["ManufacturerData"]?.dictionaryValue?.first?.value.bytesValue
            == IBeacon(uuid: Beacons.uuid, major: 7, minor: 42, measuredPower: -65).manufacturerData)
        advertise.process.signal(SIGTERM)
        let advertised = await advertise.finish()
        #expect(advertised.status == 0, "\(advertised.stderr)")
        #expect(try await bluez.mock.registeredAdvertisement() == nil, "withdrawn on SIGTERM")
    }

    @Test func advertiseExplainsAFullAdapter() async throws {
        let bluez = try await MockedBlueZ.start()
        defer { bluez.stop() }
        try await bluez.mock.setAdvertisingLimit(0)
        let run = try await Command(["advertise", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "1", "--minor", "2"],
                                bus: bluez.address).finish()
        #expect(run.status == 69)
        #expect(run.stderr.contains("nearplay: error: Bluetooth adapter hci0 has no free advertising instance"))
    }

    private func waitUntil(_ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestEnvironmentError("condition not met within 10 s") }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}
