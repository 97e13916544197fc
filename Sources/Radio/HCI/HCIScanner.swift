import BeaconFrames
import Foundation
import Logging
import SystemSupport

/// Scans straight on a Bluetooth controller through a raw HCI socket, without bluetoothd: every
/// advertisement the controller hears, with its RSSI.
///
/// It sets the scan parameters (passive by default) and enables scanning with the controller's
/// duplicate filter off, using the extended scanning commands where the controller's LE features
/// offer them (mixing them with the legacy ones is not allowed once either was used). Reports go
/// through ``HCIAdvertisementDecoder``, the same decoding as btsnoop captures.
///
/// HCI has no command that reads whether scanning is on, so "the previous state" is the one
/// found: a controller already scanning refuses new parameters (Command Disallowed), which is
/// either bluetoothd (an error saying so) or a leftover of a run that was killed (switched off
/// first; see ``HCIOptions/stateDirectory``). On cancellation scanning is switched off again.
/// When the controller goes away (unplugged, reset) it waits for it and starts again.
public struct HCIScanner: AdvertisementScanner {
    public var controller: HCIController
    /// Active scanning sends scan requests and also reports scan responses.
    public var active: Bool
    /// How often the controller starts a scan window, and how long the window lasts; equal (the
    /// default) listens all the time.
    public var interval: Duration
    public var window: Duration
    /// Advertisements weaker than this (dBm) are not reported; those without an RSSI (the
    /// controller's 127) are.
    public var rssiThreshold: Int
    public var options: HCIOptions
    public var logger: Logger

    public init(controller: HCIController, active: Bool = false, interval: Duration = .milliseconds(100),
                window: Duration = .milliseconds(100), rssiThreshold: Int = -127, options: HCIOptions = HCIOptions(),
                logger: Logger = Logger(label: "nearplay.radio.hci")) {
        self.controller = controller
        self.active = active
        self.interval = interval
        self.window = window
        self.rssiThreshold = rssiThreshold
        self.options = options
        self.logger = logger
    }

    public func scan(_ receive: (Advertisement) async -> Void) async throws {
        let began = ContinuousClock.now
        var run = HCIRun(controller: controller, options: options, logger: logger, role: "scan")
        var decoder = HCIAdvertisementDecoder()
        var heard: [Advertisement] = []
        var malformed = 0
        var saidForeign = false
        while let link = try await run.open() {
            var activity: HCIActivity?
            var controllerWasReset = false
            do {
                let extended = try await run.features(link).extendedAdvertising
                try await run.recoverFromEarlierRun(link)
                let scanning: HCIActivity = extended ? .extendedScan : .legacyScan
                if extended {
                    try await run.setUp(.leSetExtendedScanParameters(active: active, interval: interval, window: window),
                                        on: link, leftover: scanning)
                } else {
                    try await run.setUp(.leSetScanParameters(active: active, interval: interval, window: window),
                                        on: link, leftover: scanning)
                }
                run.note(scanning)
                activity = scanning
                try await run.require(extended ? .leSetExtendedScanEnable(true, filterDuplicates: false)
                                               : .leSetScanEnable(true, filterDuplicates: false), on: link)
                if options.bluetoothdIsRunning() {
                    logger.notice("bluetoothd is running: it may change the scan settings of \(controller.name) under this scan. Use --backend bluez to share the controller with it.")
                }
                logger.notice("Scanning on Bluetooth controller \(controller.name) through raw HCI (\(extended ? "extended" : "legacy") commands, \(active ? "active" : "passive")).")
                for await batch in link.events {
                    let time = began.duration(to: batch.time).inSeconds
                    heard.removeAll(keepingCapacity: true)
                    for packet in batch.packets {
                        do {
                            try decoder.decode(packet, framing: .h4, time: time, into: &heard)
                        } catch {
                            malformed += 1
                            logger.debug("Skipped a malformed advertising report from \(controller.name): \(error).")
                        }
                        if let result = try? HCIEvent.commandResult(packet) {
                            if result.opcode == .reset { controllerWasReset = true }
                            if !saidForeign, Self.scanCommands.contains(result.opcode) {
                                saidForeign = true
                                logger.warning("Another program (bluetoothd?) sent \(result.opcode) to \(controller.name) during this scan; if reports stop, stop it or use --backend bluez.")
                            }
                        }
                    }
                    for advertisement in heard where advertisement.rssi.map({ $0 >= rssiThreshold }) ?? true {
                        await receive(advertisement)
                    }
                    if controllerWasReset { break }
                }
                if controllerWasReset {
                    // The kernel brought the controller up again (bluetoothd restarted, someone
                    // powered it off and on): scanning ended with the reset.
                    logger.notice("Bluetooth controller \(controller.name) was reset (powered off and on); setting scanning up again.")
                    link.close()
                }
            } catch let error as RadioError where error.code == .adapterMissing && !Task.isCancelled {
                // Gone during the setup: wait for it below, as when it goes mid-scan.
            } catch {
                await run.end(link, activity)
                if Task.isCancelled { return }
                throw error
            }
            guard await run.ended(link, activity, detail: "\(malformed) malformed reports so far") else { return }
        }
    }

    static let scanCommands: Set<HCIOpcode> = [.leSetScanEnable, .leSetScanParameters, .leSetExtendedScanEnable, .leSetExtendedScanParameters]
}
