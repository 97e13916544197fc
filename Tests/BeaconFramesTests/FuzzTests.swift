import BeaconFrames
import Testing

/// Decoders of bytes from the air must never trap: random and mutated inputs, many of them.
@Suite struct FuzzTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seeds: [[UInt8]] = [
        "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
        "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509",
        "0201060303aafe1716aafe00e3123456789012346789010000000000010000",
        "0303aafe1316aafe10f8036769746875620063697472757a",
        "0201060303aafe1116aafe20000b18130000001467000028",
        "043e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1",
        "3e1d0d011000006655443322110100ff7fc40000000000000000000003020106",
    ].map { try! Hex.decode($0) }

    /// Runs every decoder on `bytes`; returns normally whatever they make of it.
    static func exercise(_ bytes: [UInt8]) {
        let ad = AdvertisingData(parsing: bytes)
        _ = ad.flags; _ = ad.localName; _ = ad.manufacturerData; _ = ad.serviceData16
        _ = ad.serviceUUIDs16; _ = ad.serviceUUIDs128; _ = ad.txPowerLevel
        _ = BeaconFrame.decodeAll(ad)
        _ = try? IBeacon(advertisingData: ad)
        _ = try? AltBeacon(advertisingData: ad)
        _ = try? EddystoneFrame(advertisingData: ad)
        _ = try? EddystoneFrame(serviceData: bytes)
        _ = try? EddystoneURL.decode(bytes)
        _ = try? ExposureNotification(advertisingData: ad)
        _ = try? HCIEvent.advertisingReports(bytes)
        _ = try? HCIEvent.advertisingReports(bytes, framing: .eventCode)
        _ = try? HCIEvent.commandResult(bytes)
        _ = try? HCILEFeatures(returnParameters: bytes)
        var decoder = HCIAdvertisementDecoder()
        var advertisements: [Advertisement] = []
        _ = try? decoder.decode(bytes, time: 0, into: &advertisements)
        _ = try? BTSnoop.parse(BTSnoop.header(datalink: .h4) + bytes)
        _ = Sighting.decodeIdentity(bytes)
    }

    /// The allocation-free hot path finds exactly the identity the full decoders find.
    static func fastPathAgrees(_ bytes: [UInt8]) -> Bool {
        let fast = Sighting.decodeIdentity(bytes)
        let ad = AdvertisingData(parsing: bytes)
        // The fast path stops at a broken structure; compare on the structures before it.
        let firstIdentity = ad.structures.lazy.compactMap { structure -> (BeaconIdentity, Int?)? in
            let single = AdvertisingData(structures: [structure])
            if let b = try? IBeacon(advertisingData: single) { return (b.identity, b.measuredPower == 0 ? nil : Int(b.measuredPower)) }
            if let b = try? AltBeacon(advertisingData: single) { return (b.identity, Int(b.measuredPower)) }
            if case let .uid(b)? = try? EddystoneFrame(advertisingData: single) { return (b.identity, b.measuredPower) }
            return nil
        }.first
        return fast?.0 == firstIdentity?.0 && fast?.1 == firstIdentity?.1
    }

    @Test func randomBytesNeverTrap() {
        var random = Generator(state: 42)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...80, using: &random)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            Self.exercise(bytes)
            #expect(Self.fastPathAgrees(bytes))
        }
    }

    @Test func mutatedFramesNeverTrapAndFastPathAgrees() {
        var random = Generator(state: 7)
        var disagreements = 0
        for seed in Self.seeds {
            for _ in 0..<5_000 {
                var bytes = seed
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                    case 1 where !bytes.isEmpty: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
                    case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
                    default: if !bytes.isEmpty { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random)) }
                    }
                }
                Self.exercise(bytes)
                if !Self.fastPathAgrees(bytes) { disagreements += 1 }
            }
        }
        #expect(disagreements == 0)
    }

    /// The radio's decoder and `HCIEvent.advertisingReports` agree on every mutated event: the
    /// same reports when it decodes (legacy ones pass straight through), nothing when it throws.
    @Test func theRadioDecoderAgreesWithTheReportDecoder() {
        var random = Generator(state: 12)
        let seeds = Self.seeds.filter { $0.count > 3 && ($0[0] == 0x04 || $0[0] == 0x3E) }
        #expect(!seeds.isEmpty)
        for seed in seeds {
            for _ in 0..<3_000 {
                var bytes = seed
                let index = Int.random(in: 0..<bytes.count, using: &random)
                bytes[index] = UInt8.random(in: 0...255, using: &random)
                var decoder = HCIAdvertisementDecoder()
                var advertisements = [Advertisement(time: 0, address: BluetoothAddress(1, 2, 3, 4, 5, 6), rssi: -1, data: [])]
                let decoded = Result { () throws(FrameError) in try decoder.decode(bytes, time: 1, into: &advertisements) }
                guard HCIAdvertisementDecoder.isAdvertisingReport(bytes, framing: .detect),
                      let reports = try? HCIEvent.advertisingReports(bytes) else {
                    #expect(advertisements.count == 1, "a refused event appends nothing")
                    continue
                }
                #expect((try? decoded.get()) != nil)
                let legacy = reports.filter { !$0.isExtended }
                if legacy.count == reports.count {
                    #expect(advertisements.dropFirst().map(\.data) == legacy.map(\.data))
                    #expect(advertisements.dropFirst().map(\.rssi) == legacy.map(\.rssi))
                }
            }
        }
    }

    @Test func roundTripsRandomIBeacons() throws {
        var random = Generator(state: 99)
        for _ in 0..<2_000 {
            let beacon = IBeacon(uuid: BeaconUUID(high: random.next(), low: random.next()),
                                 major: UInt16.random(in: 0...UInt16.max, using: &random),
                                 minor: UInt16.random(in: 0...UInt16.max, using: &random),
                                 measuredPower: Int8.random(in: Int8.min...Int8.max, using: &random))
            #expect(try IBeacon(advertisingData: AdvertisingData(parsing: beacon.advertisingData())) == beacon)
            #expect(BeaconIdentity(beacon.identity.description) == beacon.identity)
            #expect(BeaconUUID(beacon.uuid.description) == beacon.uuid)
        }
    }
}
