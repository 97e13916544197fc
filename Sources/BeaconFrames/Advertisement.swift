/// One advertisement as a radio received it, before any decoding.
///
/// Every radio backend (BlueZ, raw HCI, trace replay, simulated air) produces these and nothing
/// after the radio knows which backend it came from.
public struct Advertisement: Sendable, Hashable {
    /// Seconds since the start of the scan or trace. Monotonic within one source.
    public var time: Double
    public var address: BluetoothAddress
    public var addressType: AddressType?
    /// Received signal strength in dBm; nil when the controller reported none (HCI's 127).
    public var rssi: Int?
    /// The advertising data: AD structures as sent over the air, no header.
    public var data: [UInt8]
    /// The receiver, when a trace holds several.
    public var receiver: Receiver?

    public init(time: Double, address: BluetoothAddress, addressType: AddressType? = nil,
                rssi: Int?, data: [UInt8], receiver: Receiver? = nil) {
        self.time = time
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.data = data
        self.receiver = receiver
    }
}
