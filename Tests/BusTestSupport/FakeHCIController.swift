import BeaconFrames
import Foundation
import Glibc
import Radio

/// A Bluetooth controller on the other end of a `socketpair(AF_UNIX, SOCK_SEQPACKET)`: it keeps
/// every command packet the backend writes, answers each as `answer` says (Command Complete,
/// Command Status, or silence), and sends whatever events the test hands it. SEQPACKET keeps
/// packet boundaries, as an HCI socket does.
public final class FakeController: @unchecked Sendable {
    // @unchecked: `received` and `answer` are behind `lock`; the descriptors never change.
    public enum Answer: Sendable {
        /// Command Complete with this status and return parameters after it.
        case complete(status: UInt8, parameters: [UInt8])
        /// Command Status with this status.
        case status(UInt8)
        case silence
    }

    /// The controller's LE features: legacy only, or with extended advertising (bit 12).
    public static let legacyFeatures: UInt64 = 0x0000_0000_0000_001F
    public static let extendedFeatures: UInt64 = 0x0000_0000_0000_181F

    /// The backend's end: non-blocking, close-on-exec; the backend closes it.
    public let host: Int32
    private let device: Int32
    private let lock = NSLock()
    private var received: [[UInt8]] = []
    private var answer: @Sendable (HCICommand) -> Answer
    private var unplugged = false

    /// Answers every command with success; LE Read Local Supported Features with `features`.
    public convenience init(features: UInt64 = FakeController.legacyFeatures) {
        self.init { command in FakeController.success(command, features: features) }
    }

    public init(answer: @escaping @Sendable (HCICommand) -> Answer) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0, "socketpair failed")
        host = pair[0]
        device = pair[1]
        _ = fcntl(host, F_SETFL, fcntl(host, F_GETFL) | O_NONBLOCK)
        self.answer = answer
        Thread { [self] in serve() }.start()
    }

    deinit { stop() }

    /// Success, with the features for LE Read Local Supported Features.
    public static func success(_ command: HCICommand, features: UInt64) -> Answer {
        if command.opcode == .leReadLocalSupportedFeatures {
            return .complete(status: 0, parameters: (0..<8).map { UInt8(truncatingIfNeeded: features >> ($0 * 8)) })
        }
        return .complete(status: 0, parameters: [])
    }

    /// The controller as the backend sees it: this fake's descriptor, handed over once.
    /// A second open finds no controller: the backend closes the descriptor when it is done,
    /// and handing the same number out again could give it a descriptor that by then belongs
    /// to something else in this process.
    public var controller: HCIController {
        let host = host
        return HCIController(name: "fake\(host)") { [self] in
            guard lock.withLock({ () -> Bool in defer { handedOver = true }; return !handedOver }) else {
                throw RadioError(.adapterMissing, "The fake controller fake\(host) was already opened once.")
            }
            return host
        }
    }

    private var handedOver = false

    /// Every command packet received so far, in order.
    public var commands: [[UInt8]] { lock.withLock { received } }

    /// The opcodes received so far, in order.
    public var opcodes: [HCIOpcode] { commands.map { HCIOpcode(rawValue: UInt16($0[1]) | UInt16($0[2]) << 8) } }

    public func setAnswer(_ answer: @escaping @Sendable (HCICommand) -> Answer) { lock.withLock { self.answer = answer } }

    /// Sends one event packet (H4 byte first) to the backend.
    public func send(_ packet: [UInt8]) {
        lock.withLock {
            guard !unplugged else { return }
            _ = packet.withUnsafeBytes { Glibc.send(device, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// The controller goes away: its end shuts down, the backend reads the end of the stream.
    /// (The serving thread, woken by the shutdown, closes the descriptor: closing it here, under
    /// its poll, would keep the socket open until the poll returns.)
    public func unplug() {
        lock.withLock {
            guard !unplugged else { return }
            unplugged = true
            _ = Glibc.shutdown(device, Int32(SHUT_RDWR))
        }
    }

    /// Same as unplugging: the fake ends.
    public func stop() { unplug() }

    /// Waits until the commands received satisfy `predicate`; false after `timeout`.
    public func waitForCommands(within timeout: Duration = .seconds(30), _ predicate: ([HCIOpcode]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if predicate(opcodes) { return true }
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Answers commands until unplugged, blocking in poll meanwhile (no CPU while idle).
    /// The descriptor is closed under the lock, marked unplugged: `send` and `unplug` never
    /// touch the number afterwards, when it may name another descriptor of this process (a
    /// socket shut down or written to by mistake was how other tests' connections died).
    private func serve() {
        defer {
            lock.withLock {
                unplugged = true
                Glibc.close(device)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            if lock.withLock({ unplugged }) { return }
            var descriptor = pollfd(fd: device, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, -1) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.recv(device, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 || lock.withLock({ unplugged }) { return }
            guard n >= 4, buffer[0] == HCICommand.h4CommandPacketType else { continue }
            // One command per packet, its length as its header says: a command split over two
            // writes, or two joined in one, is not one a controller would answer.
            guard Int(buffer[3]) == n - 4 else { continue }
            let packet = Array(buffer[..<n])
            let command = HCICommand(HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8), Array(packet[4...]))
            let reply = lock.withLock { () -> Answer in
                received.append(packet)
                return answer(command)
            }
            let low = UInt8(command.opcode.rawValue & 0xFF), high = UInt8(command.opcode.rawValue >> 8)
            switch reply {
            case .complete(let status, let parameters):
                send([HCIEvent.h4EventPacketType, HCIEvent.commandCompleteCode, UInt8(4 + parameters.count), 1, low, high, status] + parameters)
            case .status(let status):
                send([HCIEvent.h4EventPacketType, HCIEvent.commandStatusCode, 4, status, 1, low, high])
            case .silence:
                break
            }
        }
    }
}

/// Event packets for the fake controller to send, built field by field (Core Specification Vol 4,
/// Part E, §7.7.65.2 and §7.7.65.13).
public enum HCIEvents {
    /// An LE Advertising Report event (H4 byte first) with one or more legacy reports.
    public static func legacy(_ reports: [(eventType: UInt8, address: String, rssi: Int8, data: [UInt8])]) -> [UInt8] {
        var parameters: [UInt8] = [HCIEvent.leAdvertisingReport, UInt8(reports.count)]
        for report in reports {
            parameters += [report.eventType, 0x00] + BluetoothAddress(report.address)!.littleEndianBytes
                + [UInt8(report.data.count)] + report.data + [UInt8(bitPattern: report.rssi)]
        }
        return [HCIEvent.h4EventPacketType, HCIEvent.leMetaEventCode, UInt8(parameters.count)] + parameters
    }

    /// An LE Extended Advertising Report event with one report; `dataStatus` 0 complete,
    /// 1 more to come, 2 truncated.
    public static func extended(address: String, rssi: Int8, sid: UInt8 = 1, dataStatus: UInt16 = 0, legacyPDU: Bool = false,
                         data: [UInt8]) -> [UInt8] {
        let eventType: UInt16 = (legacyPDU ? 0x0010 : 0x0000) | dataStatus << 5
        let parameters: [UInt8] = [HCIEvent.leExtendedAdvertisingReport, 1,
                                   UInt8(eventType & 0xFF), UInt8(eventType >> 8),  // event type
                                   0x01]                                            // random address
            + BluetoothAddress(address)!.littleEndianBytes
            + [0x01, 0x00,                      // primary PHY 1M, no secondary
               sid, 0x7F,                       // SID, TX power not available
               UInt8(bitPattern: rssi),
               0x00, 0x00,                      // no periodic advertising
               0x00] + [UInt8](repeating: 0, count: 6)  // no direct address
            + [UInt8(data.count)] + data
        return [HCIEvent.h4EventPacketType, HCIEvent.leMetaEventCode, UInt8(parameters.count)] + parameters
    }
}

/// A model of the kernel's side of `hciN` as the raw HCI backend meets it: devices by index, each
/// up or powered off, backed by a ``FakeController``, and the checks Debian 12's kernel (6.1)
/// makes. Learned on the real stack (scripts/test-real-stack): `HCIGETDEVINFO` answers for a
/// device that is down too (libbluetooth's `hci_devid` does not, which is why the backend no
/// longer uses it), and `setsockopt(SOL_HCI, HCI_FILTER)` refuses a length under
/// `sizeof(struct hci_ufilter)`, 16 bytes, with EINVAL.
public final class FakeHCIKernel: @unchecked Sendable {
    // @unchecked: everything mutable is behind `lock`.
    public struct Device: Sendable {
        public var up: Bool
        public var controller: FakeController
        public init(up: Bool, controller: FakeController) {
            self.up = up
            self.controller = controller
        }
    }

    /// The kernel's `sizeof(struct hci_ufilter)`: u32 type mask, two u32 event mask words, u16
    /// opcode, padded to the struct's 4-byte alignment.
    public static let filterLength: socklen_t = 16

    private let lock = NSLock()
    private var devices: [UInt16: Device]
    private var lengths: [socklen_t] = []

    public init(_ devices: [UInt16: Device]) { self.devices = devices }

    /// The lengths `HCI_FILTER` was set with, in order.
    public var filterLengths: [socklen_t] { lock.withLock { lengths } }

    public func setUp(_ index: UInt16, _ up: Bool) { lock.withLock { devices[index]?.up = up } }

    public var kernel: HCIKernel {
        HCIKernel(
            deviceIsUp: { [self] index, up in
                lock.withLock {
                    guard let device = devices[index] else { return ENODEV }
                    up = device.up
                    return 0
                }
            },
            openRaw: { [self] index, descriptor in
                lock.withLock {
                    guard let device = devices[index] else { return ENODEV }
                    let fd = dup(device.controller.host)
                    guard fd >= 0 else { return errno }
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    descriptor = fd
                    return 0
                }
            },
            setFilter: { [self] _, _, length in
                lock.withLock {
                    lengths.append(length)
                    return length < Self.filterLength ? EINVAL : 0
                }
            })
    }
}
