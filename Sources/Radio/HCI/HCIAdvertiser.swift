import BeaconFrames
import Foundation
import Logging

/// Advertises straight on a Bluetooth controller through a raw HCI socket, without bluetoothd:
/// non-connectable (ADV_NONCONN_IND) at the payload's interval, flags then the payload's AD
/// structures, until cancelled.
///
/// Where the controller's LE features offer extended advertising it uses an advertising set
/// (handle 0xEF) sent with legacy PDUs, so phones that scan only legacy advertisements hear it;
/// otherwise the legacy commands. Like ``HCIScanner`` it refuses to fight bluetoothd for the
/// controller, switches off what a killed run left on, switches advertising off (and removes
/// its set) on cancellation, and starts again when the controller comes back after going away.
public struct HCIAdvertiser: Advertiser {
    public var controller: HCIController
    public var options: HCIOptions
    public var logger: Logger

    public init(controller: HCIController, options: HCIOptions = HCIOptions(),
                logger: Logger = Logger(label: "nearplay.radio.hci")) {
        self.controller = controller
        self.options = options
        self.logger = logger
    }

    /// Flags (LE General Discoverable, BR/EDR not supported: 0x06, as iBeacon frames carry) and
    /// then the payload, or the payload alone when both do not fit a legacy advertisement.
    static func advertisingData(_ payload: AdvertisingPayload) -> [UInt8] {
        let withFlags = AdvertisingDataBuilder.build(flags: [0x06], manufacturerData: payload.manufacturerData, serviceData: [:])
        return withFlags.count <= 31 ? withFlags : payload.advertisingData
    }

    public func advertise(_ payload: AdvertisingPayload) async throws {
        let data = Self.advertisingData(payload)
        guard data.count <= 31 else {
            throw RadioError(.advertisementRejected, "The advertising data is \(data.count) bytes; a legacy advertisement holds 31. Shorten the manufacturer data.")
        }
        var run = HCIRun(controller: controller, options: options, logger: logger, role: "advertise")
        while let link = try await run.open() {
            var activity: HCIActivity?
            do {
                let extended = try await run.features(link).extendedAdvertising
                try await run.recoverFromEarlierRun(link)
                let handle = HCIActivity.advertisingHandle
                if extended {
                    try await run.setUp(.leSetExtendedAdvertisingParameters(handle: handle, interval: payload.interval),
                                        on: link, leftover: .extendedAdvertising)
                    try await run.require(.leSetExtendedAdvertisingData(handle: handle, data)!, on: link)
                    run.note(.extendedAdvertising)
                    activity = .extendedAdvertising
                    try await run.require(.leSetExtendedAdvertisingEnable(true, handle: handle), on: link)
                } else {
                    try await run.setUp(.leSetAdvertisingParameters(interval: payload.interval), on: link, leftover: .legacyAdvertising)
                    try await run.require(.leSetAdvertisingData(data)!, on: link)
                    run.note(.legacyAdvertising)
                    activity = .legacyAdvertising
                    try await run.require(.leSetAdvertisingEnable(true), on: link)
                }
                logger.notice("Advertising on Bluetooth controller \(controller.name) through raw HCI (\(extended ? "extended set" : "legacy commands")).")
                // Nothing to read but the end (cancellation, the controller going away) and a
                // Reset the kernel sends when it brings the controller up again, which ends
                // advertising: then set it up again.
                reset: for await batch in link.events {
                    for packet in batch.packets where (try? HCIEvent.commandResult(packet))?.opcode == .reset {
                        logger.notice("Bluetooth controller \(controller.name) was reset (powered off and on); setting advertising up again.")
                        link.close()
                        break reset
                    }
                }
            } catch let error as RadioError where error.code == .adapterMissing && !Task.isCancelled {
                // Gone during the setup: wait for it below.
            } catch {
                await run.end(link, activity)
                if Task.isCancelled { return }
                throw error
            }
            guard await run.ended(link, activity) else { return }
        }
    }
}
