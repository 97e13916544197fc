import BeaconFrames
import Foundation

/// The advertising side of a controller, as the LE commands change it and with the checks a real
/// one makes (Core Specification Vol 4, Part E, §7.8), to answer a ``FakeController``'s commands:
/// `FakeController(answer: model.answer)`.
///
/// It keeps what goes on the air: each time the (address, data) an enabled advertiser transmits
/// changes, ``transmissions`` gains an entry. A new random address set while an extended set is
/// enabled counts at once, as a controller may switch any time before the next enable; so a
/// backend that changed the address before the data would show a mixed pair.
public final class FakeAdvertisingController: @unchecked Sendable {
    // @unchecked: everything mutable is behind `lock`.
    /// One state of the air: who transmits what.
    public struct Transmission: Sendable, Hashable, CustomStringConvertible {
        public var address: BluetoothAddress
        public var addressType: AddressType
        /// The advertising data (the AD structures).
        public var data: [UInt8]

        public init(address: BluetoothAddress, addressType: AddressType, data: [UInt8]) {
            self.address = address
            self.addressType = addressType
            self.data = data
        }

        public var description: String { "\(address) (\(addressType)) \(data.count) bytes" }
    }

    private struct Advertiser {
        var ownAddressType: UInt8 = 0
        var randomAddress: BluetoothAddress?
        var data: [UInt8] = []
        var enabled = false
    }

    public let publicAddress: BluetoothAddress
    public let features: UInt64
    /// What LE Set Extended Advertising Parameters answers as the selected TX power, in dBm.
    public let selectedTXPower: Int8 = 0
    private let lock = NSLock()
    private var legacy = Advertiser()
    private var sets: [UInt8: Advertiser] = [:]
    private var log: [Transmission] = []

    public init(features: UInt64 = FakeController.extendedFeatures, publicAddress: BluetoothAddress = BluetoothAddress("00:1B:DC:07:32:11")!) {
        self.features = features
        self.publicAddress = publicAddress
    }

    /// Every state of the air since the start, in order; consecutive duplicates are kept once.
    public var transmissions: [Transmission] { lock.withLock { log } }

    /// Whether anything is on the air now.
    public var advertising: Bool { lock.withLock { legacy.enabled || sets.values.contains { $0.enabled } } }

    /// The answer a controller gives `command`, changing the state as it does.
    public func answer(_ command: HCICommand) -> FakeController.Answer {
        lock.withLock {
            let status = apply(command)
            if status == 0, command.opcode == .leReadLocalSupportedFeatures {
                return .complete(status: 0, parameters: (0..<8).map { UInt8(truncatingIfNeeded: features >> ($0 * 8)) })
            }
            // LE Set Extended Advertising Parameters returns the selected TX power after the status.
            if command.opcode == .leSetExtendedAdvertisingParameters {
                return .complete(status: status, parameters: status == 0 ? [UInt8(bitPattern: selectedTXPower)] : [])
            }
            return .complete(status: status, parameters: [])
        }
    }

    private static let success: UInt8 = 0x00
    private static let commandDisallowed: UInt8 = 0x0C
    private static let invalidParameters: UInt8 = 0x12
    private static let unknownAdvertisingIdentifier: UInt8 = 0x42

    /// The status for `command`; the state changes only on success.
    private func apply(_ command: HCICommand) -> UInt8 {
        let p = command.parameters
        switch command.opcode {
        case .leSetRandomAddress:
            // §7.8.4: refused while legacy advertising is enabled.
            guard p.count == 6 else { return Self.invalidParameters }
            guard !legacy.enabled else { return Self.commandDisallowed }
            legacy.randomAddress = BluetoothAddress(littleEndian: p)
        case .leSetAdvertisingParameters:
            // §7.8.5: refused while advertising is enabled.
            guard p.count == 15, p[5] <= 3 else { return Self.invalidParameters }
            guard !legacy.enabled else { return Self.commandDisallowed }
            legacy.ownAddressType = p[5]
        case .leSetAdvertisingData:
            guard p.count == 32, Int(p[0]) <= 31 else { return Self.invalidParameters }
            legacy.data = Array(p[1..<(1 + Int(p[0]))])
        case .leSetAdvertisingEnable:
            guard p.count == 1, p[0] <= 1 else { return Self.invalidParameters }
            // §7.8.9: a random own address that was never set is refused.
            if p[0] == 1, legacy.ownAddressType == 1, legacy.randomAddress == nil { return Self.invalidParameters }
            legacy.enabled = p[0] == 1
        case .leSetExtendedAdvertisingParameters:
            guard p.count == 25, p[10] <= 3 else { return Self.invalidParameters }
            // §7.8.53: an enabled set's parameters cannot change.
            if sets[p[0]]?.enabled == true { return Self.commandDisallowed }
            sets[p[0], default: Advertiser()].ownAddressType = p[10]
        case .leSetAdvertisingSetRandomAddress:
            guard p.count == 7 else { return Self.invalidParameters }
            guard sets[p[0]] != nil else { return Self.unknownAdvertisingIdentifier }
            sets[p[0]]!.randomAddress = BluetoothAddress(littleEndian: p[1...])
        case .leSetExtendedAdvertisingData:
            guard p.count >= 4, p.count == 4 + Int(p[3]) else { return Self.invalidParameters }
            guard sets[p[0]] != nil else { return Self.unknownAdvertisingIdentifier }
            sets[p[0]]!.data = Array(p[4...])
        case .leSetExtendedAdvertisingEnable:
            guard p.count >= 2, p[0] <= 1, p.count == 2 + 4 * Int(p[1]) else { return Self.invalidParameters }
            let handles = (0..<Int(p[1])).map { p[2 + 4 * $0] }
            guard handles.allSatisfy({ sets[$0] != nil }) else { return Self.unknownAdvertisingIdentifier }
            if p[0] == 1, handles.contains(where: { sets[$0]!.ownAddressType == 1 && sets[$0]!.randomAddress == nil }) {
                return Self.invalidParameters
            }
            for handle in handles { sets[handle]!.enabled = p[0] == 1 }
        case .leRemoveAdvertisingSet:
            guard p.count == 1 else { return Self.invalidParameters }
            guard let set = sets[p[0]] else { return Self.unknownAdvertisingIdentifier }
            guard !set.enabled else { return Self.commandDisallowed }
            sets[p[0]] = nil
        default:
            break
        }
        noteTheAir()
        return Self.success
    }

    /// Appends what each enabled advertiser transmits now, where it changed.
    private func noteTheAir() {
        for advertiser in [legacy] + sets.keys.sorted().map({ sets[$0]! }) where advertiser.enabled {
            let random = advertiser.ownAddressType & 1 == 1
            let transmission = Transmission(address: random ? advertiser.randomAddress ?? publicAddress : publicAddress,
                                            addressType: random ? .random : .public, data: advertiser.data)
            if log.last != transmission { log.append(transmission) }
        }
    }
}
