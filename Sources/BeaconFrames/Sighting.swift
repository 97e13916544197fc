/// A decoded beacon identity seen at one moment: the unit ranging works on.
public struct Sighting: Sendable, Hashable {
    public var identity: BeaconIdentity
    /// RSSI expected at 1 m in dBm, from the frame; nil when the beacon sends none (an iBeacon
    /// power byte of 0), in which case no distance can be estimated.
    public var measuredPower: Int?
    /// Received signal strength in dBm; nil when the radio reported none.
    public var rssi: Int?
    /// Seconds, on the clock of the advertisement's source.
    public var time: Double
    public var address: BluetoothAddress
    public var receiver: Receiver?

    public init(identity: BeaconIdentity, measuredPower: Int?, rssi: Int?, time: Double,
                address: BluetoothAddress, receiver: Receiver? = nil) {
        self.identity = identity
        self.measuredPower = measuredPower
        self.rssi = rssi
        self.time = time
        self.address = address
        self.receiver = receiver
    }

    /// Decodes the first iBeacon, AltBeacon or Eddystone-UID frame in an advertisement; nil when
    /// there is none.
    ///
    /// This is the per-advertisement hot path: it walks the AD bytes in place without building
    /// ``AdvertisingData`` or allocating, and accepts exactly what ``IBeacon``, ``AltBeacon`` and
    /// ``EddystoneFrame`` accept (a property test holds them to that). It borrows the
    /// advertisement: an initialiser's parameter is otherwise passed owned, which costs every
    /// caller a retain and a release of the advertising data's buffer per advertisement.
    public init?(_ advertisement: borrowing Advertisement) {
        guard let (identity, power) = Self.decodeIdentity(advertisement.data) else { return nil }
        self.init(identity: identity, measuredPower: power, rssi: advertisement.rssi,
                  time: advertisement.time, address: advertisement.address, receiver: advertisement.receiver)
    }

    /// The identity and measured power of the first beacon frame in `ad`, walking AD structures
    /// with every index checked against the buffer's end.
    public static func decodeIdentity(_ ad: [UInt8]) -> (BeaconIdentity, Int?)? {
        ad.withUnsafeBufferPointer { b -> (BeaconIdentity, Int?)? in
            let count = b.count
            var i = 0
            while i < count {
                let length = Int(b[i])
                if length == 0 { i += 1; continue }
                guard i + 1 + length <= count else { return nil }
                let type = b[i + 1]
                let d = i + 2 // first data byte
                if type == 0xFF, length >= 5 {
                    if length == 0x1A, b[d] == 0x4C, b[d + 1] == 0x00, b[d + 2] == 0x02, b[d + 3] == 0x15 {
                        let power = Int(Int8(bitPattern: b[d + 24]))
                        return (.iBeacon(uuid: uuid(b, d + 4), major: be16(b, d + 20), minor: be16(b, d + 22)),
                                power == 0 ? nil : power)
                    }
                    if length == 0x1A || length == 0x1B, b[d + 2] == 0xBE, b[d + 3] == 0xAC {
                        return (.altBeacon(id1: uuid(b, d + 4), id2: be16(b, d + 20), id3: be16(b, d + 22)),
                                Int(Int8(bitPattern: b[d + 24])))
                    }
                } else if type == 0x16, length == 0x15 || length == 0x17,
                          b[d] == 0xAA, b[d + 1] == 0xFE, b[d + 2] == 0x00 {
                    let txPower = Int(Int8(bitPattern: b[d + 3]))
                    return (.eddystone(uuid(b, d + 4)), txPower - EddystoneUID.oneMetreLoss)
                }
                i += 1 + length
            }
            return nil
        }
    }

    @inline(__always)
    private static func be16(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt16 {
        UInt16(b[at]) << 8 | UInt16(b[at + 1])
    }

    /// 16 bytes at `at`, big-endian, as two unaligned 64-bit loads. The caller has checked that
    /// `at + 16 <= b.count`.
    @inline(__always)
    private static func uuid(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> BeaconUUID {
        let raw = UnsafeRawPointer(b.baseAddress!) + at
        return BeaconUUID(high: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                          low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }
}
