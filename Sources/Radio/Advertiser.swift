/// Something that can broadcast advertising data: a radio, or a test double.
public protocol Advertiser: Sendable {
    /// Broadcasts `payload` until the calling task is cancelled, then withdraws it and returns.
    ///
    /// Transient trouble (the Bluetooth service restarting, the adapter switched off) is waited
    /// out; what waiting cannot fix (no free advertising slot, the payload refused) is thrown as a
    /// ``RadioError``.
    func advertise(_ payload: AdvertisingPayload) async throws
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
