import BeaconFrames
import BusTestSupport
import Foundation
import Glibc
import Proximity
import Radio
import Synchronization
import Ranging
import Testing

/// The commands the raw HCI backend sends, byte for byte against the Core Specification's
/// parameter layouts (Vol 4, Part E, §7.8). Each packet: 01 (H4 command), opcode little-endian,
/// parameter length, parameters.
@Suite struct HCICommandLayoutTests {
    @Test func scanningCommands() {
        // LE Set Scan Parameters (0x200B), 7 bytes: 00 passive | A0 00 interval 160 × 0.625 ms
        // = 100 ms | A0 00 window 100 ms | 00 public own address | 00 accept all.
        #expect(HCICommand.leSetScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100)).packet
            == [0x01, 0x0B, 0x20, 0x07, 0x00, 0xA0, 0x00, 0xA0, 0x00, 0x00, 0x00])
        // Active, 60 ms interval (96 = 0x60), 30 ms window (48 = 0x30).
        #expect(HCICommand.leSetScanParameters(active: true, interval: .milliseconds(60), window: .milliseconds(30)).packet
            == [0x01, 0x0B, 0x20, 0x07, 0x01, 0x60, 0x00, 0x30, 0x00, 0x00, 0x00])
        // A window longer than the interval is cut to it.
        #expect(HCICommand.leSetScanParameters(active: false, interval: .milliseconds(10), window: .seconds(1)).parameters[3...4]
            == [0x10, 0x00])
        // LE Set Scan Enable (0x200C): 01 enable | 00 duplicate filter OFF.
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: false).packet == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        #expect(HCICommand.leSetScanEnable(false, filterDuplicates: false).packet == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
        // LE Set Extended Scan Parameters (0x2041), 8 bytes: 00 own address | 00 filter policy |
        // 01 PHYs (1M) | 00 passive | A0 00 interval | A0 00 window.
        #expect(HCICommand.leSetExtendedScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100)).packet
            == [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x00, 0xA0, 0x00, 0xA0, 0x00])
        // LE Set Extended Scan Enable (0x2042), 6 bytes: 01 enable | 00 no duplicate filter |
        // 00 00 duration: until disabled | 00 00 period.
        #expect(HCICommand.leSetExtendedScanEnable(true, filterDuplicates: false).packet
            == [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
        // LE Read Local Supported Features (0x2003): no parameters.
        #expect(HCICommand.leReadLocalSupportedFeatures.packet == [0x01, 0x03, 0x20, 0x00])
    }

    @Test func advertisingCommands() {
        // LE Set Advertising Parameters (0x2006), 15 bytes: A0 00 min | A0 00 max (100 ms) |
        // 03 ADV_NONCONN_IND | 00 public | 00 peer type | 6 × 00 peer | 07 all channels | 00 no filter.
        #expect(HCICommand.leSetAdvertisingParameters(interval: .milliseconds(100)).packet
            == [0x01, 0x06, 0x20, 0x0F, 0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        // The interval is kept to the specification's 20 ms (0x20) minimum.
        #expect(HCICommand.leSetAdvertisingParameters(interval: .milliseconds(1)).parameters[0...1] == [0x20, 0x00])
        // LE Set Advertising Data (0x2008): 32 bytes, the length then 31 bytes zero-padded.
        let data: [UInt8] = [0x02, 0x01, 0x06]
        #expect(HCICommand.leSetAdvertisingData(data)?.packet
            == [0x01, 0x08, 0x20, 0x20, 0x03, 0x02, 0x01, 0x06] + [UInt8](repeating: 0, count: 28))
        #expect(HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32)) == nil)
        // LE Set Advertising Enable (0x200A).
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == [0x01, 0x0A, 0x20, 0x01, 0x01])
        // LE Set Extended Advertising Parameters (0x2036), 25 bytes: EF handle | 10 00 legacy
        // non-connectable non-scannable | A0 00 00 min | A0 00 00 max | 07 channels | 00 public |
        // 00 peer type | 6 × 00 peer | 00 no filter | 7F no TX power preference | 01 primary 1M |
        // 00 max skip | 01 secondary 1M | 00 SID | 00 no scan request notifications.
        #expect(HCICommand.leSetExtendedAdvertisingParameters(handle: 0xEF, interval: .milliseconds(100)).packet
            == [0x01, 0x36, 0x20, 0x19, 0xEF, 0x10, 0x00, 0xA0, 0x00, 0x00, 0xA0, 0x00, 0x00, 0x07, 0x00, 0x00,
                0, 0, 0, 0, 0, 0, 0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00])
        // LE Set Extended Advertising Data (0x2037): EF handle | 03 complete | 01 do not fragment |
        // 03 length | data.
        #expect(HCICommand.leSetExtendedAdvertisingData(handle: 0xEF, data)?.packet
            == [0x01, 0x37, 0x20, 0x07, 0xEF, 0x03, 0x01, 0x03, 0x02, 0x01, 0x06])
        // LE Set Extended Advertising Enable (0x2039): 01 enable | 01 one set | EF | 00 00 no
        // duration | 00 no event limit.
        #expect(HCICommand.leSetExtendedAdvertisingEnable(true, handle: 0xEF).packet
            == [0x01, 0x39, 0x20, 0x06, 0x01, 0x01, 0xEF, 0x00, 0x00, 0x00])
        // LE Remove Advertising Set (0x203C).
        #expect(HCICommand.leRemoveAdvertisingSet(handle: 0xEF).packet == [0x01, 0x3C, 0x20, 0x01, 0xEF])
    }

    /// What rotating identities add: a random own address, and the commands that set it.
    @Test func randomAddressCommands() {
        let address = BluetoothAddress("3E:E5:E6:9C:5C:54")!
        // LE Set Random Address (0x2005), 6 bytes: the address least-significant byte first.
        #expect(HCICommand.leSetRandomAddress(address).packet == [0x01, 0x05, 0x20, 0x06, 0x54, 0x5C, 0x9C, 0xE6, 0xE5, 0x3E])
        // LE Set Advertising Set Random Address (0x2035), 7 bytes: EF handle | the address, LSB first.
        #expect(HCICommand.leSetAdvertisingSetRandomAddress(handle: 0xEF, address).packet
            == [0x01, 0x35, 0x20, 0x07, 0xEF, 0x54, 0x5C, 0x9C, 0xE6, 0xE5, 0x3E])
        // LE Set Advertising Parameters with own address type 01 random (the sixth parameter byte).
        #expect(HCICommand.leSetAdvertisingParameters(interval: .milliseconds(100), ownAddress: .random).packet
            == [0x01, 0x06, 0x20, 0x0F, 0xA0, 0x00, 0xA0, 0x00, 0x03, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        // LE Set Extended Advertising Parameters with own address type 01 random (after the channel map 07).
        #expect(HCICommand.leSetExtendedAdvertisingParameters(handle: 0xEF, interval: .milliseconds(100), ownAddress: .random).packet
            == [0x01, 0x36, 0x20, 0x19, 0xEF, 0x10, 0x00, 0xA0, 0x00, 0x00, 0xA0, 0x00, 0x00, 0x07, 0x01, 0x00,
                0, 0, 0, 0, 0, 0, 0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00])
        #expect("\(HCIOpcode.leSetRandomAddress)" == "LE Set Random Address (0x2005)")
        #expect("\(HCIOpcode.leSetAdvertisingSetRandomAddress)" == "LE Set Advertising Set Random Address (0x2035)")
    }

    @Test func decodesCommandCompleteAndCommandStatus() throws {
        // Command Complete: 0E | 0C length | 01 credit | 03 20 LE Read Local Supported Features |
        // 00 success | 1F 18 00 00 00 00 00 00 features (bit 12: extended advertising).
        let complete = try #require(try HCIEvent.commandResult([0x04, 0x0E, 0x0C, 0x01, 0x03, 0x20, 0x00,
                                                                  0x1F, 0x18, 0, 0, 0, 0, 0, 0]))
        #expect(complete.opcode == .leReadLocalSupportedFeatures)
        #expect(complete.status == .success)
        #expect(try HCILEFeatures(returnParameters: complete.returnParameters).extendedAdvertising)
        // Command Status: 0F | 04 | 0C Command Disallowed | 01 credit | 0B 20 LE Set Scan Parameters.
        let status = try #require(try HCIEvent.commandResult([0x04, 0x0F, 0x04, 0x0C, 0x01, 0x0B, 0x20]))
        #expect(status.opcode == .leSetScanParameters)
        #expect(status.status == .commandDisallowed)
        // Not a command result: nil. A command result with a wrong length: an error with the offset.
        #expect(try HCIEvent.commandResult([0x04, 0x3E, 0x01, 0x02]) == nil)
        #expect(throws: FrameError.wrongLength(what: "HCI parameter total length", offset: 2, expected: "3 (the bytes present)", found: 4)) {
            try HCIEvent.commandResult([0x04, 0x0F, 0x04, 0x00, 0x01, 0x0B])
        }
        #expect(throws: FrameError.self) { try HCILEFeatures(returnParameters: [0x1F, 0x18]) }
    }
}

/// The raw HCI scanner and advertiser against a fake controller on a socketpair.
@Suite(.serialized) struct HCIBackendTests {
    /// A folder of its own for the state files, and options that use it. The command timeout is
    /// long: a loaded machine (the whole suite at once) can hold a fake controller's thread back
    /// for seconds, and only the silent controller's test is about timing out.
    static func options(bluetoothd: Bool = false, timeout: Duration = .seconds(20)) -> (HCIOptions, String) {
        let folder = NSTemporaryDirectory() + "nearplay-hci-\(UUID().uuidString.prefix(8))"
        return (HCIOptions(commandTimeout: timeout, stateDirectory: folder, bluetoothdIsRunning: { bluetoothd }), folder)
    }

    static let beaconData = Beacons.first.advertisingData(includeFlags: true)

    @Test func scansWithTheLegacyCommandsAndTheDuplicateFilterOff() async throws {
        let fake = FakeController(features: FakeController.legacyFeatures)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        // Among the first tests of a full run, when the whole suite starts at once: a generous wait.
        #expect(await fake.waitForCommands(within: .seconds(120)) { $0.contains(.leSetScanEnable) })
        #expect(fake.commands == [
            HCICommand.leReadLocalSupportedFeatures.packet,
            HCICommand.leSetScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100)).packet,
            HCICommand.leSetScanEnable(true, filterDuplicates: false).packet,
        ])
        // While it scans, the state file says so, with this process's id.
        let state = try String(contentsOfFile: folder + "/\(fake.controller.name)-scan", encoding: .utf8)
        #expect(state == "\(getpid())\nscan legacy\n")
        fake.send(HCIEvents.legacy([(3, Beacons.firstAddress, -63, Self.beaconData)]))
        let seen = await probe.first { $0.address.description == Beacons.firstAddress }
        #expect(seen?.rssi == -63)
        #expect(seen?.data == Self.beaconData)
        #expect(seen?.addressType == .public)
        await probe.stop()
        // Cancelled: scanning switched off again, the state file gone, no error.
        #expect(fake.commands.last == HCICommand.leSetScanEnable(false, filterDuplicates: false).packet)
        #expect(!FileManager.default.fileExists(atPath: folder + "/\(fake.controller.name)-scan"))
        #expect(probe.error == nil)
        fake.stop()
    }

    @Test func usesTheExtendedCommandsWhereTheControllerHasThem() async throws {
        let fake = FakeController(features: FakeController.extendedFeatures)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, active: true, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetExtendedScanEnable) })
        #expect(fake.commands == [
            HCICommand.leReadLocalSupportedFeatures.packet,
            HCICommand.leSetExtendedScanParameters(active: true, interval: .milliseconds(100), window: .milliseconds(100)).packet,
            HCICommand.leSetExtendedScanEnable(true, filterDuplicates: false).packet,
        ])
        await probe.stop()
        #expect(fake.commands.last == HCICommand.leSetExtendedScanEnable(false, filterDuplicates: false).packet)
        fake.stop()
    }

    /// The events of a real Android capture, sent as the controller would: every report arrives,
    /// and the iBeacons among them are the ones the capture's expectations list.
    @Test func deliversEveryReportOfARealCapture() async throws {
        let shared = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/data/captures")
        let capture = try BTSnoop.parse([UInt8](try Data(contentsOf: shared.appendingPathComponent("horizon74_btsnoop_hci.log"))))
        let events = capture.records.compactMap { $0.hciEvent(datalink: capture.datalink) }
            .filter { $0.count > 3 && $0[0] == HCIEvent.leMetaEventCode && $0[2] == HCIEvent.leAdvertisingReport }
        // (An event the decoder refuses yields no report, from the scanner either.)
        let reports = events.flatMap { (try? HCIEvent.advertisingReports($0, framing: .eventCode)) ?? [] }
        #expect(reports.count > 100)
        let expected = try String(contentsOf: shared.appendingPathComponent("horizon74-expected-ibeacon.csv"), encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }

        let fake = FakeController()
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) })
        for event in events { fake.send([HCIEvent.h4EventPacketType] + event) }
        let last = reports.last!
        _ = await probe.first(after: reports.count - 1) { _ in true }
        await probe.stop()
        let heard = probe.all
        #expect(heard.count == reports.count)
        #expect(heard.last?.address == last.address)
        #expect(zip(heard, reports).allSatisfy { $0.address == $1.address && $0.rssi == $1.rssi && $0.data == $1.data })
        for row in expected {
            // address, rssi, major, minor (columns 7, 8, 10, 11)
            let match = heard.first { $0.address.description == row[6] && $0.rssi == Int(row[7]) }
            let sighting = match.flatMap(Sighting.init)
            #expect(sighting?.identity.description.hasSuffix("/\(row[9])/\(row[10])") == true, "\(row[6]) at \(row[7]) dBm")
        }
        fake.stop()
    }

    /// Generated events: several reports in one event, an extended one, one in two fragments,
    /// a truncated event, an unknown LE subevent and an unknown event. The bad ones are skipped
    /// and the scan goes on.
    @Test func decodesGeneratedEventsAndSkipsBadOnes() async throws {
        let fake = FakeController(features: FakeController.extendedFeatures)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetExtendedScanEnable) })
        let long = [UInt8](repeating: 0xAB, count: 200)
        let longData: [UInt8] = [201, 0xFF] + long  // one manufacturer AD structure of 201 bytes
        fake.send(HCIEvents.legacy([(0, "11:22:33:44:55:01", -40, [0x02, 0x01, 0x06]),
                                    (4, "11:22:33:44:55:02", -41, Self.beaconData)]))
        fake.send(HCIEvents.extended(address: "11:22:33:44:55:03", rssi: -42, legacyPDU: true, data: Self.beaconData))
        fake.send(HCIEvents.extended(address: "11:22:33:44:55:04", rssi: -43, dataStatus: 1, data: Array(longData[..<120])))
        fake.send(HCIEvents.extended(address: "11:22:33:44:55:04", rssi: -43, dataStatus: 0, data: Array(longData[120...])))
        var truncated = HCIEvents.legacy([(3, "11:22:33:44:55:05", -44, Self.beaconData)])
        truncated.removeLast(5)  // the parameter length promises 5 more bytes than follow
        fake.send(truncated)
        fake.send([0x04, 0x3E, 0x03, 0x14, 0x00, 0x00])  // LE Meta subevent 0x14 (not ours)
        fake.send([0x04, 0xFF, 0x02, 0x01, 0x02])        // vendor event
        fake.send(HCIEvents.extended(address: "11:22:33:44:55:06", rssi: -46, dataStatus: 2, data: [0x02, 0x01]))
        fake.send(HCIEvents.legacy([(3, "11:22:33:44:55:07", -47, Self.beaconData)]))
        let after = await probe.first { $0.address.description == "11:22:33:44:55:07" }
        await probe.stop()
        #expect(after?.rssi == -47, "the scan goes on after the bad events")
        let heard = probe.all.map { ($0.address.description, $0.rssi!, $0.data) }
        #expect(heard.map(\.0) == ["11:22:33:44:55:01", "11:22:33:44:55:02", "11:22:33:44:55:03", "11:22:33:44:55:04", "11:22:33:44:55:07"])
        #expect(heard.map(\.1) == [-40, -41, -42, -43, -47])
        #expect(heard[3].2 == longData, "the two fragments joined")
        #expect(heard[2].2 == Self.beaconData)
        #expect(probe.all[2].addressType == .random)
        #expect(probe.error == nil)
        fake.stop()
    }

    @Test func aRefusedCommandEndsTheScanWithTheCommandAndTheStatus() async throws {
        let fake = FakeController { command in
            command.opcode == .leSetScanParameters ? .complete(status: 0x12, parameters: [])
                : FakeController.success(command, features: FakeController.legacyFeatures)
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = await #expect(throws: RadioError.self) {
            try await HCIScanner(controller: fake.controller, options: options).scan { _ in }
        }
        #expect(error?.code == .controllerRefused)
        #expect(error?.message.contains("LE Set Scan Parameters (0x200B)") == true)
        #expect(error?.message.contains("Invalid HCI Command Parameters (0x12)") == true)
        #expect(!fake.opcodes.contains(.leSetScanEnable), "nothing was switched on, so nothing to switch off")
        fake.stop()
    }

    /// Command Disallowed while bluetoothd runs: it holds the controller, and the error says
    /// what to do.
    @Test func saysWhenBluetoothdHoldsTheController() async throws {
        let fake = FakeController { command in
            command.opcode == .leSetScanParameters ? .status(0x0C) : FakeController.success(command, features: FakeController.legacyFeatures)
        }
        let (options, folder) = Self.options(bluetoothd: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = await #expect(throws: RadioError.self) {
            try await HCIScanner(controller: fake.controller, options: options).scan { _ in }
        }
        #expect(error?.code == .controllerBusy)
        #expect(error?.message.contains("bluetoothd holds Bluetooth controller") == true)
        #expect(error?.message.contains("--backend bluez") == true)
        #expect(error?.message.contains("stop bluetoothd") == true)
        #expect(fake.opcodes == [.leReadLocalSupportedFeatures, .leSetScanParameters], "it did not touch bluetoothd's scan")
        fake.stop()
    }

    /// Command Disallowed without bluetoothd: a leftover scan (a killed run whose note was lost),
    /// switched off before one more try.
    @Test func switchesOffALeftoverScanWhenBluetoothdIsNotRunning() async throws {
        let disallowedOnce = FirstTime()
        let fake = FakeController { command in
            if command.opcode == .leSetScanParameters, disallowedOnce.check() { return .complete(status: 0x0C, parameters: []) }
            return FakeController.success(command, features: FakeController.legacyFeatures)
        }
        let (options, folder) = Self.options(bluetoothd: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) && $0.count >= 5 })
        await probe.stop()
        #expect(Array(fake.commands.prefix(5)) == [
            HCICommand.leReadLocalSupportedFeatures.packet,
            HCICommand.leSetScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100)).packet,
            HCICommand.leSetScanEnable(false, filterDuplicates: false).packet,
            HCICommand.leSetScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100)).packet,
            HCICommand.leSetScanEnable(true, filterDuplicates: false).packet,
        ])
        #expect(probe.error == nil)
        fake.stop()
    }

    /// A run killed with SIGKILL leaves its note; the next run switches that scan off first.
    @Test func aRunAfterAKilledOneSwitchesItsScanOffFirst() async throws {
        let fake = FakeController()
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A process that was here and is gone: the pid of a child that has exited.
        let child = try SpawnedProcess("/bin/true", [])
        await child.wait()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "\(child.pid)\nscan extended\n".write(toFile: folder + "/\(fake.controller.name)-scan", atomically: true, encoding: .utf8)
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) })
        #expect(fake.opcodes == [.leReadLocalSupportedFeatures, .leSetExtendedScanEnable, .leSetScanParameters, .leSetScanEnable])
        #expect(fake.commands[1] == HCICommand.leSetExtendedScanEnable(false, filterDuplicates: false).packet)
        await probe.stop()
        fake.stop()
    }

    /// Another live process's note: refused, naming it.
    @Test func refusesWhileAnotherLiveProcessScansTheController() async throws {
        let fake = FakeController()
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sleeper = try SpawnedProcess("/bin/sleep", ["30"])
        defer { sleeper.kill() }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "\(sleeper.pid)\nscan legacy\n".write(toFile: folder + "/\(fake.controller.name)-scan", atomically: true, encoding: .utf8)
        let error = await #expect(throws: RadioError.self) {
            try await HCIScanner(controller: fake.controller, options: options).scan { _ in }
        }
        #expect(error?.code == .controllerBusy)
        #expect(error?.message.contains("pid \(sleeper.pid)") == true)
        fake.stop()
    }

    @Test func aSilentControllerTimesOut() async throws {
        let fake = FakeController { _ in .silence }
        let (options, folder) = Self.options(timeout: .milliseconds(300))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = await #expect(throws: RadioError.self) {
            try await HCIScanner(controller: fake.controller, options: options).scan { _ in }
        }
        #expect(error?.code == .controllerUnresponsive)
        #expect(error?.message.contains("did not answer LE Read Local Supported Features") == true)
        fake.stop()
    }

    /// A controller whose features answer is too short: an error that names the controller and
    /// the command, says what was wrong and what to do.
    @Test func aMalformedFeaturesAnswerSaysWhatToDo() async throws {
        let fake = FakeController { command in
            command.opcode == .leReadLocalSupportedFeatures ? .complete(status: 0, parameters: [0x01, 0x02, 0x03]) : .complete(status: 0, parameters: [])
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = await #expect(throws: RadioError.self) {
            try await HCIScanner(controller: fake.controller, options: options).scan { _ in }
        }
        #expect(error?.code == .controllerRefused)
        let message = error?.message ?? ""
        #expect(message.contains("Bluetooth controller \(fake.controller.name) gave a malformed answer to LE Read Local Supported Features"))
        #expect(message.contains("needs 4 bytes but only 3 remain"), "what was wrong: \(message)")
        #expect(message.contains("try again, or use --backend bluez."))
        fake.stop()
    }

    /// A controller that does not know LE Read Local Supported Features (Command Status 0x01):
    /// a legacy one.
    @Test func takesAControllerWithoutTheFeaturesCommandForALegacyOne() async throws {
        let fake = FakeController { command in
            command.opcode == .leReadLocalSupportedFeatures ? .status(0x01) : .complete(status: 0, parameters: [])
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: fake.controller, options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) })
        #expect(fake.opcodes == [.leReadLocalSupportedFeatures, .leSetScanParameters, .leSetScanEnable])
        await probe.stop()
        fake.stop()
    }

    /// The controller goes away mid-scan (unplugged): the scanner waits, opens it again when it
    /// is back, sets it up again and goes on reporting.
    @Test func carriesOnWhenTheControllerComesBackAfterGoingAway() async throws {
        let first = FakeController()
        let second = FakeController()
        let opened = Opened()
        let controller = HCIController(name: "fake-replugged") { () throws -> Int32 in
            switch opened.next() {
            case 0: return first.host
            case 1: throw RadioError(.adapterMissing, "Bluetooth adapter fake-replugged not found.")
            default: return second.host
            }
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: controller, options: options))
        #expect(await first.waitForCommands { $0.contains(.leSetScanEnable) })
        first.send(HCIEvents.legacy([(3, Beacons.firstAddress, -60, Self.beaconData)]))
        #expect(await probe.first { $0.rssi == -60 } != nil)
        first.unplug()
        #expect(await second.waitForCommands { $0.contains(.leSetScanEnable) })
        second.send(HCIEvents.legacy([(3, Beacons.firstAddress, -61, Self.beaconData)]))
        let later = await probe.first { $0.rssi == -61 }
        await probe.stop()
        #expect(later != nil)
        #expect(opened.count >= 3)
        #expect(probe.all.map(\.time) == probe.all.map(\.time).sorted())
        #expect(probe.error == nil)
        first.stop()
        second.stop()
    }

    /// What the scanner hears goes through the same proximity pipeline as every other backend.
    @Test func feedsTheProximityPipeline() async throws {
        let fake = FakeController()
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let scanner = HCIScanner(controller: fake.controller, options: options)
        let events = EventLog()
        let task = Task {
            try await LiveProximity(scanner: scanner, configuration: RangingConfiguration(rangeInterval: 0)).run { update in
                events.append(update.events)
            }
        }
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) })
        for rssi in [-60, -61, -62] as [Int8] {
            fake.send(HCIEvents.legacy([(3, Beacons.firstAddress, rssi, Self.beaconData)]))
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while events.all.filter({ $0.kind == .range }).count < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        _ = await task.result
        let all = events.all
        #expect(all.first?.kind == .enter)
        #expect(all.first?.identity == Sighting(Beacons.advertisement(Beacons.first, Beacons.firstAddress, rssi: -60))?.identity)
        #expect(all.filter { $0.kind == .range }.count == 3)
        fake.stop()
    }

    @Test func advertisesWithTheLegacyCommandsAndWithdrawsOnCancellation() async throws {
        let fake = FakeController(features: FakeController.legacyFeatures)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = AdvertisingPayload(manufacturerData: [0x004C: Beacons.first.manufacturerData])
        let task = Task { try await HCIAdvertiser(controller: fake.controller, options: options).advertise(payload) }
        #expect(await fake.waitForCommands { $0.contains(.leSetAdvertisingEnable) })
        // Flags 02 01 06, then the iBeacon's manufacturer data: the usual 30-byte iBeacon frame.
        let onAir = Beacons.first.advertisingData(includeFlags: true)
        #expect(onAir.count == 30)
        #expect(fake.commands == [
            HCICommand.leReadLocalSupportedFeatures.packet,
            HCICommand.leSetAdvertisingParameters(interval: .milliseconds(100)).packet,
            HCICommand.leSetAdvertisingData(onAir)!.packet,
            HCICommand.leSetAdvertisingEnable(true).packet,
        ])
        #expect(FileManager.default.fileExists(atPath: folder + "/\(fake.controller.name)-advertise"))
        task.cancel()
        try await task.value
        #expect(fake.commands.last == HCICommand.leSetAdvertisingEnable(false).packet)
        #expect(!FileManager.default.fileExists(atPath: folder + "/\(fake.controller.name)-advertise"))
        fake.stop()
    }

    @Test func advertisesWithAnExtendedSetWhereTheControllerHasThem() async throws {
        let fake = FakeController(features: FakeController.extendedFeatures)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = AdvertisingPayload(manufacturerData: [0x004C: Beacons.first.manufacturerData], interval: .milliseconds(200))
        let task = Task { try await HCIAdvertiser(controller: fake.controller, options: options).advertise(payload) }
        #expect(await fake.waitForCommands { $0.contains(.leSetExtendedAdvertisingEnable) })
        let onAir = Beacons.first.advertisingData(includeFlags: true)
        #expect(fake.commands == [
            HCICommand.leReadLocalSupportedFeatures.packet,
            HCICommand.leSetExtendedAdvertisingParameters(handle: 0xEF, interval: .milliseconds(200)).packet,
            HCICommand.leSetExtendedAdvertisingData(handle: 0xEF, onAir)!.packet,
            HCICommand.leSetExtendedAdvertisingEnable(true, handle: 0xEF).packet,
        ])
        task.cancel()
        try await task.value
        #expect(Array(fake.commands.suffix(2)) == [
            HCICommand.leSetExtendedAdvertisingEnable(false, handle: 0xEF).packet,
            HCICommand.leRemoveAdvertisingSet(handle: 0xEF).packet,
        ])
        fake.stop()
    }

    static let rotation = [Beacons.first, Beacons.second, IBeacon(uuid: Beacons.uuid, major: 1, minor: 4, measuredPower: -59)]

    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Each identity from a new non-resolvable private address, switched while advertising is
    /// off, on a controller model that refuses what a real one refuses (a random address while
    /// legacy advertising is on, an unset random address at enable).
    @Test(arguments: [false, true]) func rotatesTheAddressWithTheData(extended: Bool) async throws {
        let model = FakeAdvertisingController(features: extended ? FakeController.extendedFeatures : FakeController.legacyFeatures)
        let fake = FakeController(answer: model.answer)
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let task = Task { try await HCIAdvertiser(controller: fake.controller, options: options).advertise(rotating: payloads) }
        for (index, beacon) in Self.rotation.enumerated() {
            next.yield(AdvertisingPayload(manufacturerData: [0x004C: beacon.manufacturerData]))
            #expect(await Self.waitUntil { model.transmissions.count == index + 1 }, "\(model.transmissions)")
        }
        let air = model.transmissions
        #expect(air.map(\.data) == Self.rotation.map { $0.advertisingData(includeFlags: true) })
        #expect(Set(air.map(\.address)).count == 3, "a new address for each identity")
        #expect(air.allSatisfy { $0.addressType == .random && $0.address.randomKind == .nonResolvablePrivate })

        // Byte for byte: the setup, then per rotation off, address, data, on.
        let handle: UInt8 = 0xEF
        let data = Self.rotation.map { $0.advertisingData(includeFlags: true) }
        let expected: [HCICommand] = extended
            ? [.leReadLocalSupportedFeatures,
               .leSetExtendedAdvertisingParameters(handle: handle, interval: .milliseconds(100), ownAddress: .random),
               .leSetAdvertisingSetRandomAddress(handle: handle, air[0].address),
               .leSetExtendedAdvertisingData(handle: handle, data[0])!,
               .leSetExtendedAdvertisingEnable(true, handle: handle)]
                + (1...2).flatMap { index -> [HCICommand] in
                    [.leSetExtendedAdvertisingEnable(false, handle: handle),
                     .leSetAdvertisingSetRandomAddress(handle: handle, air[index].address),
                     .leSetExtendedAdvertisingData(handle: handle, data[index])!,
                     .leSetExtendedAdvertisingEnable(true, handle: handle)]
                }
            : [.leReadLocalSupportedFeatures,
               .leSetAdvertisingParameters(interval: .milliseconds(100), ownAddress: .random),
               .leSetRandomAddress(air[0].address),
               .leSetAdvertisingData(data[0])!,
               .leSetAdvertisingEnable(true)]
                + (1...2).flatMap { index -> [HCICommand] in
                    [.leSetAdvertisingEnable(false), .leSetRandomAddress(air[index].address),
                     .leSetAdvertisingData(data[index])!, .leSetAdvertisingEnable(true)]
                }
        #expect(fake.commands == expected.map(\.packet))
        task.cancel()
        try await task.value
        #expect(!model.advertising, "switched off on cancellation")
        fake.stop()
    }

    /// A legacy controller that will not change its random address (Command Disallowed, as one
    /// before Core 5.2 may answer while it scans): advertising stays off, never the new identity
    /// from the old address, and the error says why.
    @Test func staysOffWhenTheControllerRefusesTheNewAddress() async throws {
        let model = FakeAdvertisingController(features: FakeController.legacyFeatures)
        let addressesSet = Opened()
        let fake = FakeController { command in
            if command.opcode == .leSetRandomAddress, addressesSet.next() > 0 { return .complete(status: 0x0C, parameters: []) }
            return model.answer(command)
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let task = Task { try await HCIAdvertiser(controller: fake.controller, options: options).advertise(rotating: payloads) }
        next.yield(AdvertisingPayload(manufacturerData: [0x004C: Beacons.first.manufacturerData]))
        #expect(await Self.waitUntil { model.transmissions.count == 1 })
        next.yield(AdvertisingPayload(manufacturerData: [0x004C: Beacons.second.manufacturerData]))
        let error = await #expect(throws: RadioError.self) { try await task.value }
        #expect(error?.code == .controllerBusy)
        #expect(error?.message.contains("refused LE Set Random Address (0x2005) with Command Disallowed") == true, "\(error?.message ?? "")")
        #expect(model.transmissions.count == 1, "the second identity never went on the air: \(model.transmissions)")
        #expect(!model.advertising)
        fake.stop()
    }

    /// The model itself: what a real controller refuses, it refuses.
    @Test func theControllerModelRefusesWhatARealOneDoes() {
        let model = FakeAdvertisingController(features: FakeController.legacyFeatures)
        let address = BluetoothAddress("3E:E5:E6:9C:5C:54")!
        func status(_ command: HCICommand) -> UInt8? {
            if case .complete(let status, _) = model.answer(command) { return status }
            return nil
        }
        #expect(status(.leSetAdvertisingParameters(interval: .milliseconds(100), ownAddress: .random)) == 0x00)
        #expect(status(.leSetAdvertisingEnable(true)) == 0x12, "random own address never set")
        #expect(status(.leSetRandomAddress(address)) == 0x00)
        #expect(status(.leSetAdvertisingEnable(true)) == 0x00)
        #expect(status(.leSetRandomAddress(address)) == 0x0C, "not while advertising")
        #expect(status(.leSetAdvertisingSetRandomAddress(handle: 0xEF, address)) == 0x42, "no such set")
        #expect(model.transmissions == [.init(address: address, addressType: .random, data: [])])
    }

    @Test func refusesAdvertisingDataTooLongForALegacyAdvertisement() async throws {
        let fake = FakeController()
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = AdvertisingPayload(manufacturerData: [0xFFFF: [UInt8](repeating: 1, count: 40)])
        let error = await #expect(throws: RadioError.self) {
            try await HCIAdvertiser(controller: fake.controller, options: options).advertise(payload)
        }
        #expect(error?.code == .advertisementRejected)
        #expect(fake.commands.isEmpty)
        fake.stop()
    }
}

/// True the first time only.
final class FirstTime: Sendable {
    private let done = Mutex(false)
    func check() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// Counts the opener's calls.
final class Opened: Sendable {
    private let calls = Mutex(0)
    func next() -> Int {
        calls.withLock { calls in
            defer { calls += 1 }
            return calls
        }
    }
    var count: Int { calls.withLock { $0 } }
}

/// The proximity events a pipeline handed out, from whichever task.
final class EventLog: Sendable {
    private let events = Mutex<[ProximityEvent]>([])
    func append(_ new: [ProximityEvent]) { events.withLock { $0 += new } }
    var all: [ProximityEvent] { events.withLock { $0 } }
}

