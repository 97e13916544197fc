import BeaconFrames
import Foundation
import Logging
import Synchronization

/// Advertises straight on a Bluetooth controller through a raw HCI socket, without bluetoothd:
/// non-connectable (ADV_NONCONN_IND) at the payload's interval, flags then the payload's AD
/// structures, until cancelled.
///
/// Where the controller's LE features offer extended advertising it uses an advertising set
/// (handle 0xEF) sent with legacy PDUs, so phones that scan only legacy advertisements hear it;
/// otherwise the legacy commands. Like ``HCIScanner`` it refuses to fight bluetoothd for the
/// controller, switches off what a killed run left on, switches advertising off (and removes
/// its set) on cancellation, and starts again when the controller comes back after going away.
///
/// ``advertise(_:)`` sends from the controller's public address, as before rotating identities.
/// ``advertise(rotating:)`` sends each payload from a fresh non-resolvable private address
/// (random, top two bits 00; Core Specification Vol 6, Part B, §1.3.2.2), and changes address
/// and data together: advertising off, LE Set Random Address (legacy) or LE Set Advertising Set
/// Random Address (the extended set), the new data, advertising on. So no advertising event
/// carries the new identity from the old address or the old identity from the new one. Why
/// that kind of address: a static random address is meant to last a power cycle, so changing it
/// every period misuses it and some scanners cache it as an identity; a resolvable private
/// address needs an identity resolving key that no one here resolves (the lobby maps the
/// rotating identity back to its owner, not the address). The non-resolvable private address
/// is the one the specification gives for exactly this, and the one the Linux kernel uses for
/// a non-connectable advertisement (`hci_get_random_address` with `require_privacy`), so both
/// backends look alike on the air.
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

    /// The data for `payload`, or the error that says it is too long for a legacy advertisement.
    static func checkedData(_ payload: AdvertisingPayload) throws -> [UInt8] {
        let data = advertisingData(payload)
        guard data.count <= 31 else {
            throw RadioError(.advertisementRejected, "The advertising data is \(data.count) bytes; a legacy advertisement holds 31. Shorten the manufacturer data.")
        }
        return data
    }

    public func advertise(_ payload: AdvertisingPayload) async throws {
        _ = try Self.checkedData(payload)
        let source = PayloadSource(payload)
        try await run(source, privateAddresses: false)
    }

    public func advertise(rotating payloads: AsyncStream<AdvertisingPayload>) async throws {
        let source = PayloadSource(nil)
        // The feeder is a child of the advertising: cancelled with it, and over when it returns.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await payload in payloads { source.offer(payload) }
            }
            try await run(source, privateAddresses: true)
            group.cancelAll()
        }
    }

    /// Sets up and keeps advertising whatever `source` holds, through the controller going away
    /// and coming back; with `privateAddresses`, from a new random address for each payload.
    private func run(_ source: PayloadSource, privateAddresses: Bool) async throws {
        guard await source.first() else { return }
        var run = HCIRun(controller: controller, options: options, logger: logger, role: "advertise")
        while let link = try await run.open() {
            var activity: HCIActivity?
            do {
                let extended = try await run.features(link).extendedAdvertising
                try await run.recoverFromEarlierRun(link)
                let handle = HCIActivity.advertisingHandle
                var payload = source.latest!
                let onAir = try Self.checkedData(payload)
                let address = privateAddresses ? BluetoothAddress.nonResolvablePrivate() : nil
                let ownAddress: OwnAddressType = privateAddresses ? .random : .public
                if extended {
                    try await run.setUp(.leSetExtendedAdvertisingParameters(handle: handle, interval: payload.interval, ownAddress: ownAddress),
                                        on: link, leftover: .extendedAdvertising)
                    if let address { try await run.require(.leSetAdvertisingSetRandomAddress(handle: handle, address), on: link) }
                    try await run.require(.leSetExtendedAdvertisingData(handle: handle, onAir)!, on: link)
                    run.note(.extendedAdvertising)
                    activity = .extendedAdvertising
                    try await run.require(.leSetExtendedAdvertisingEnable(true, handle: handle), on: link)
                } else {
                    try await run.setUp(.leSetAdvertisingParameters(interval: payload.interval, ownAddress: ownAddress), on: link,
                                        leftover: .legacyAdvertising)
                    if let address { try await setRandomAddress(address, on: link, run: run) }
                    try await run.require(.leSetAdvertisingData(onAir)!, on: link)
                    run.note(.legacyAdvertising)
                    activity = .legacyAdvertising
                    try await run.require(.leSetAdvertisingEnable(true), on: link)
                }
                logger.notice("Advertising on Bluetooth controller \(controller.name) through raw HCI (\(extended ? "extended set" : "legacy commands"))\(address.map { " from \($0)" } ?? "").")
                // The link's events (the end, when the controller goes away or the task is
                // cancelled, and a Reset the kernel sends when it brings the controller up
                // again, which ends advertising: then set it up again) and new payloads.
                let inputs = source.inputs(from: link)
                reading: for await input in inputs {
                    switch input {
                    case .events(let batch):
                        if batch.packets.contains(where: { (try? HCIEvent.commandResult($0))?.opcode == .reset }) {
                            logger.notice("Bluetooth controller \(controller.name) was reset (powered off and on); setting advertising up again.")
                            link.close()
                            break reading
                        }
                    case .payloadChanged:
                        guard let next = source.latest, next != payload else { continue }
                        let data = try Self.checkedData(next)
                        let newAddress = BluetoothAddress.nonResolvablePrivate()
                        try await rotate(to: data, interval: next.interval == payload.interval ? nil : next.interval,
                                         from: newAddress, extended: extended, on: link, run: run)
                        payload = next
                        logger.info("Advertising a new identity on Bluetooth controller \(controller.name) from \(newAddress).")
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

    /// Off, the new address (and interval, when it changed), the new data, on: the controller
    /// sends nothing between the last event of the old pair and the first of the new one.
    private func rotate(to data: [UInt8], interval: Duration?, from address: BluetoothAddress, extended: Bool,
                        on link: HCILink, run: HCIRun) async throws {
        let handle = HCIActivity.advertisingHandle
        if extended {
            try await run.require(.leSetExtendedAdvertisingEnable(false, handle: handle), on: link)
            if let interval {
                try await run.require(.leSetExtendedAdvertisingParameters(handle: handle, interval: interval, ownAddress: .random), on: link)
            }
            try await run.require(.leSetAdvertisingSetRandomAddress(handle: handle, address), on: link)
            try await run.require(.leSetExtendedAdvertisingData(handle: handle, data)!, on: link)
            try await run.require(.leSetExtendedAdvertisingEnable(true, handle: handle), on: link)
        } else {
            try await run.require(.leSetAdvertisingEnable(false), on: link)
            if let interval { try await run.require(.leSetAdvertisingParameters(interval: interval, ownAddress: .random), on: link) }
            try await setRandomAddress(address, on: link, run: run)
            try await run.require(.leSetAdvertisingData(data)!, on: link)
            try await run.require(.leSetAdvertisingEnable(true), on: link)
        }
    }

    /// LE Set Random Address, with what its Command Disallowed means: before Core Specification
    /// 5.2 a controller may refuse it while it scans, and a legacy-only controller is often that
    /// old. Advertising then stays off rather than going on from the old address.
    private func setRandomAddress(_ address: BluetoothAddress, on link: HCILink, run: HCIRun) async throws {
        do {
            try await link.execute(.leSetRandomAddress(address), timeout: options.commandTimeout)
        } catch HCILinkError.refused(_, .commandDisallowed) {
            throw RadioError(.controllerBusy, "Bluetooth controller \(controller.name) refused \(HCIOpcode.leSetRandomAddress) with Command Disallowed: a controller without extended advertising may not change its random address while it scans. Scan with another controller, or use --backend bluez.")
        } catch let error as HCILinkError {
            throw run.radioError(error)
        }
    }
}

/// The payload to advertise, the latest one offered, and the inputs one link's run reads: that
/// link's events and word of a new payload, in one stream.
private final class PayloadSource: Sendable {
    enum Input: Sendable {
        case events(HCILink.Batch)
        case payloadChanged
    }

    private struct State {
        var latest: AdvertisingPayload?
        /// The current link's inputs, while one is read, and which link's they are.
        var listener: AsyncStream<Input>.Continuation?
        var generation = 0
        /// Who waits for the first payload.
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    init(_ payload: AdvertisingPayload?) { state = Mutex(State(latest: payload)) }

    var latest: AdvertisingPayload? { state.withLock { $0.latest } }

    func offer(_ payload: AdvertisingPayload) {
        let (listener, waiting) = state.withLock { state in
            state.latest = payload
            defer { state.waiting = nil }
            return (state.listener, state.waiting)
        }
        listener?.yield(.payloadChanged)
        waiting?.resume()
    }

    /// Waits for the first payload; false when cancelled first.
    func first() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state in
                    if state.latest != nil || Task.isCancelled { return true }
                    state.waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.waiting = nil }
                return state.waiting
            }?.resume()
        }
        return latest != nil && !Task.isCancelled
    }

    /// `link`'s events and new payloads from now on; ends when the link's events end (the
    /// controller went away, or the link was closed) and when the reading task is cancelled.
    func inputs(from link: HCILink) -> AsyncStream<Input> {
        let (inputs, input) = AsyncStream<Input>.makeStream()
        let forwarding = Task {
            for await batch in link.events { input.yield(.events(batch)) }
            input.finish()
        }
        let generation = state.withLock { state in
            state.generation += 1
            state.listener = input
            return state.generation
        }
        input.onTermination = { [weak self] _ in
            forwarding.cancel()
            self?.state.withLock { state in
                if state.generation == generation { state.listener = nil }
            }
        }
        // A payload offered while the link was being set up is looked at first.
        input.yield(.payloadChanged)
        return inputs
    }
}
