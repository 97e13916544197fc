import BeaconFrames
import Testing

@Suite struct RandomAddressTests {
    /// Returns the values it was given, in turn: to reach the cases a fair generator rarely hits.
    struct Scripted: RandomNumberGenerator {
        var values: [UInt64]
        mutating func next() -> UInt64 { values.removeFirst() }
    }

    @Test func namesTheKindByTheTopTwoBits() {
        #expect(BluetoothAddress("3E:E5:E6:9C:5C:54")!.randomKind == .nonResolvablePrivate)
        #expect(BluetoothAddress("4A:00:00:00:00:01")!.randomKind == .resolvablePrivate)
        #expect(BluetoothAddress("80:00:00:00:00:01")!.randomKind == .reserved)
        #expect(BluetoothAddress("C0:FF:EE:00:00:01")!.randomKind == .static)
    }

    @Test func aNonResolvablePrivateAddressHasTheTopBitsClearAndIsFresh() {
        var generator = SystemRandomNumberGenerator()
        let addresses = (0..<1000).map { _ in BluetoothAddress.nonResolvablePrivate(using: &generator) }
        #expect(addresses.allSatisfy { $0.randomKind == .nonResolvablePrivate })
        #expect(Set(addresses).count == 1000)
    }

    /// All 46 random bits 0 or all 1, or the device's public address, are drawn again.
    @Test func skipsWhatTheSpecificationForbids() {
        let publicAddress = BluetoothAddress("00:1B:DC:07:32:11")!
        // The high bits of a draw are cleared: 0xC000… is all zeros, 0xFFFF… all ones.
        var generator = Scripted(values: [0xC000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFFF, publicAddress.value, 0x0000_1234_5678_9ABC])
        let address = BluetoothAddress.nonResolvablePrivate(using: &generator, avoiding: publicAddress)
        #expect(address == BluetoothAddress("12:34:56:78:9A:BC")!)
        #expect(generator.values.isEmpty)
    }
}
