import Synchronization

/// Something that can broadcast advertising data: a radio, or a test double.
public protocol Advertiser: Sendable {
    /// Broadcasts `payload` until the calling task is cancelled, then withdraws it and returns.
    ///
    /// Transient trouble (the Bluetooth service restarting, the adapter switched off) is waited
    /// out; what waiting cannot fix (no free advertising slot, the payload refused) is thrown as a
    /// ``RadioError``.
    func advertise(_ payload: AdvertisingPayload) async throws

    /// Broadcasts each payload `payloads` yields in turn until the calling task is cancelled
    /// (the last one stays on the air when the sequence ends), then withdraws it and returns.
    ///
    /// This is how rotating identities go on the air: each new payload replaces the one before
    /// and, where the backend chooses the address, goes out from a new random address in the same
    /// step, so no advertising event carries the new data from the old address or the reverse.
    func advertise(rotating payloads: AsyncStream<AdvertisingPayload>) async throws
}

extension Advertiser {
    /// Restarts ``advertise(_:)`` for each payload: what a backend that cannot swap in place does.
    public func advertise(rotating payloads: AsyncStream<AdvertisingPayload>) async throws {
        let current = Mutex<Task<Void, any Error>?>(nil)
        try await withTaskCancellationHandler {
            for await payload in payloads {
                if let previous = current.withLock({ $0 }) {
                    previous.cancel()
                    _ = try? await previous.value
                }
                if Task.isCancelled { break }
                current.withLock { $0 = Task { try await self.advertise(payload) } }
            }
            try await current.withLock({ $0 })?.value
        } onCancel: {
            current.withLock { $0?.cancel() }
        }
    }
}
/// What to broadcast: non-connectable advertising data, as company-specific manufacturer data.
public struct AdvertisingPayload: Sendable, Hashable {
    /// Manufacturer-specific data by Bluetooth SIG company identifier (0x004C is Apple, whose
    /// layout iBeacon uses). The bytes follow the company identifier on the air.
    public var manufacturerData: [UInt16: [UInt8]]
    /// The advertising interval to ask for, where the backend can set it.
    public var interval: Duration

    public init(manufacturerData: [UInt16: [UInt8]], interval: Duration = .milliseconds(100)) {
        self.manufacturerData = manufacturerData
        self.interval = interval
    }

    /// The AD structures this payload puts on the air (after the flags the controller adds).
    public var advertisingData: [UInt8] {
        AdvertisingDataBuilder.build(manufacturerData: manufacturerData, serviceData: [:])
    }
}
