import BeaconFrames
import BusTestSupport
import Foundation
import Glibc
import Radio
import Testing

/// How the raw HCI backend finds and opens `hciN`, against a model of the kernel's checks that
/// the real stack taught us (scripts/test-real-stack): a device that is down exists, the event
/// filter is 16 bytes, and a controller the kernel brings up again has been reset.
@Suite(.serialized) struct HCIKernelTests {
    static func options() -> (HCIOptions, String) {
        let folder = NSTemporaryDirectory() + "nearplay-hci-kernel-\(UUID().uuidString.prefix(8))"
        return (HCIOptions(commandTimeout: .seconds(20), stateDirectory: folder, bluetoothdIsRunning: { false }), folder)
    }

    /// Command Complete for Reset, as the kernel's own Reset is answered when it brings the
    /// controller up: every raw socket on the device sees it.
    static let resetComplete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    @Test func setsTheEventFilterWithTheLengthTheKernelChecks() async throws {
        let fake = FakeController(features: FakeController.legacyFeatures)
        let kernel = FakeHCIKernel([1: .init(up: true, controller: fake)])
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: .adapter("hci1", kernel: kernel.kernel), options: options))
        // Among the first tests of a full run, when the whole suite starts at once: a generous wait.
        #expect(await fake.waitForCommands(within: .seconds(120)) { $0.contains(.leSetScanEnable) })
        #expect(kernel.filterLengths == [FakeHCIKernel.filterLength])
        #expect(HCIKernel.filterLength == FakeHCIKernel.filterLength)
        await probe.stop()
        #expect(probe.error == nil)
        fake.stop()
    }

    @Test func callsADeviceThatIsDownPoweredOffAndWaitsForIt() async throws {
        let fake = FakeController(features: FakeController.legacyFeatures)
        let kernel = FakeHCIKernel([1: .init(up: false, controller: fake)])
        let controller = HCIController.adapter("hci1", kernel: kernel.kernel)
        #expect { _ = try controller.open() } throws: { error in
            let error = error as? RadioError
            return error?.code == .adapterMissing && error?.message.contains("hci1 is powered off: power it on") == true
                && error?.message.contains("btmgmt --index 1 power on") == true
        }
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: controller, options: options))
        try await Task.sleep(for: .milliseconds(600))
        #expect(fake.commands.isEmpty, "nothing is sent to a device that is down")
        #expect(probe.error == nil, "a device that is down is waited for, not an error")
        kernel.setUp(1, true)
        #expect(await fake.waitForCommands { $0.contains(.leSetScanEnable) })
        await probe.stop()
        fake.stop()
    }

    @Test func saysWhenADeviceIsMissingOrTheNameIsNotADevice() throws {
        let kernel = FakeHCIKernel([:])
        #expect { _ = try HCIController.adapter("hci5", kernel: kernel.kernel).open() } throws: { error in
            (error as? RadioError)?.code == .adapterMissing && (error as? RadioError)?.message.contains("hci5 not found") == true
        }
        for name in ["bluetooth0", "hci", "hci01", "hci-1"] {
            #expect { _ = try HCIController.adapter(name, kernel: kernel.kernel).open() } throws: { error in
                (error as? RadioError)?.code == .adapterUnusable && (error as? RadioError)?.message.contains("not a kernel Bluetooth device name") == true
            }
        }
    }

    @Test func setsScanningUpAgainAfterTheKernelResetsTheController() async throws {
        let fake = FakeController(features: FakeController.extendedFeatures)
        let kernel = FakeHCIKernel([0: .init(up: true, controller: fake)])
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = ScanProbe(HCIScanner(controller: .adapter("hci0", kernel: kernel.kernel), options: options))
        #expect(await fake.waitForCommands { $0.contains(.leSetExtendedScanEnable) })
        // bluetoothd restarted (or someone powered hci0 off and on): the kernel reset it.
        fake.send(Self.resetComplete)
        #expect(await fake.waitForCommands { $0.filter { $0 == .leSetExtendedScanEnable }.count == 2 },
                "scanning set up again: \(fake.opcodes)")
        let beacon = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2, measuredPower: -59)
        fake.send(HCIEvents.extended(address: "C0:FF:EE:00:00:01", rssi: -60, legacyPDU: true, data: beacon.advertisingData(includeFlags: true)))
        #expect(await probe.first { $0.rssi == -60 } != nil)
        await probe.stop()
        #expect(probe.error == nil)
        fake.stop()
    }

    @Test func setsAdvertisingUpAgainAfterTheKernelResetsTheController() async throws {
        let fake = FakeController(features: FakeController.legacyFeatures)
        let kernel = FakeHCIKernel([0: .init(up: true, controller: fake)])
        let (options, folder) = Self.options()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let beacon = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2, measuredPower: -59)
        let advertiser = HCIAdvertiser(controller: .adapter("hci0", kernel: kernel.kernel), options: options)
        let task = Task { try await advertiser.advertise(AdvertisingPayload(manufacturerData: [0x004C: beacon.manufacturerData])) }
        #expect(await fake.waitForCommands { $0.contains(.leSetAdvertisingEnable) })
        fake.send(Self.resetComplete)
        #expect(await fake.waitForCommands { $0.filter { $0 == .leSetAdvertisingData }.count == 2 && $0.last == .leSetAdvertisingEnable },
                "advertising set up again: \(fake.opcodes)")
        task.cancel()
        try await task.value
        fake.stop()
    }
}
