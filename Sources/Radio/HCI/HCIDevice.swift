import CBluetooth
import Foundation
import Glibc

/// Where the raw HCI backend finds its controller: a kernel HCI device (`hci0`) opened through
/// libbluetooth, or any descriptor that speaks HCI packets, one per read and write (tests hand in
/// one end of a `socketpair(AF_UNIX, SOCK_SEQPACKET)` with a fake controller on the other).
public struct HCIController: Sendable {
    /// `hci0`, or what the injected descriptor stands for; used in messages and state files.
    public var name: String
    /// Opens a fresh descriptor (non-blocking, close-on-exec), or throws ``RadioError``:
    /// `.adapterMissing` when waiting may help (no such adapter yet, or powered off), any other
    /// code when not.
    public var open: @Sendable () throws -> Int32

    public init(name: String, open: @escaping @Sendable () throws -> Int32) {
        self.name = name
        self.open = open
    }

    /// The kernel's HCI device `adapter` (e.g. `hci0`), its socket filtered to the events the
    /// backend reads: Command Complete, Command Status and LE Meta. `kernel` makes the calls
    /// (tests pass a model of the kernel's checks).
    public static func adapter(_ adapter: String, kernel: HCIKernel = .system) -> HCIController {
        HCIController(name: adapter) { try HCIDevice.open(adapter, kernel: kernel) }
    }
}

/// The three kernel calls that find and open `hciN` on the raw channel, as closures so tests can
/// put a model of the kernel's checks in their place (this machine's kernel has no Bluetooth).
/// Each returns 0 or a positive errno.
public struct HCIKernel: Sendable {
    /// `HCIGETDEVINFO` for device `index`: whether it is up (`HCI_UP`), or ENODEV when there is none.
    public var deviceIsUp: @Sendable (_ index: UInt16, _ up: inout Bool) -> Int32
    /// A raw HCI socket bound to device `index` (`HCI_CHANNEL_RAW`), close-on-exec.
    public var openRaw: @Sendable (_ index: UInt16, _ descriptor: inout Int32) -> Int32
    /// `setsockopt(SOL_HCI, HCI_FILTER)` with `length` bytes of the filter.
    public var setFilter: @Sendable (_ descriptor: Int32, _ filter: UnsafeRawPointer, _ length: socklen_t) -> Int32

    public init(deviceIsUp: @escaping @Sendable (UInt16, inout Bool) -> Int32,
                openRaw: @escaping @Sendable (UInt16, inout Int32) -> Int32,
                setFilter: @escaping @Sendable (Int32, UnsafeRawPointer, socklen_t) -> Int32) {
        self.deviceIsUp = deviceIsUp
        self.openRaw = openRaw
        self.setFilter = setFilter
    }

    /// This machine's kernel, through libbluetooth.
    public static let system = HCIKernel(
        deviceIsUp: { index, up in
            var info = hci_dev_info()
            guard hci_devinfo(Int32(index), &info) == 0 else { return errno }
            up = withUnsafeMutablePointer(to: &info.flags) { hci_test_bit(Int32(HCI_UP), $0) } != 0
            return 0
        },
        openRaw: { index, descriptor in
            let fd = hci_open_dev(Int32(index))
            guard fd >= 0 else { return errno }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            descriptor = fd
            return 0
        },
        setFilter: { descriptor, filter, length in
            setsockopt(descriptor, Int32(SOL_HCI), Int32(HCI_FILTER), filter, length) == 0 ? 0 : errno
        })

    /// The length the kernel wants for `HCI_FILTER`: `sizeof(struct hci_ufilter)`, 16 bytes with the
    /// C struct's tail padding. Swift's `MemoryLayout.size` leaves that padding out (14) and the
    /// kernel answers EINVAL; `stride` counts it, as C's `sizeof` does.
    public static let filterLength = socklen_t(MemoryLayout<hci_filter>.stride)
}

/// The kernel side: libbluetooth calls on `hciN`, each failure turned into a ``RadioError`` that
/// says what to do.
enum HCIDevice {
    /// The device index in a kernel name: 1 for `hci1`; nil for anything else.
    static func index(_ adapter: String) -> UInt16? {
        guard adapter.hasPrefix("hci"), let index = UInt16(adapter.dropFirst(3)), String(index) == adapter.dropFirst(3) else { return nil }
        return index
    }

    static func open(_ adapter: String, kernel: HCIKernel = .system) throws(RadioError) -> Int32 {
        // The index comes from the name: libbluetooth's hci_devid() asks the kernel for the list
        // of devices that are up, so it calls a device that exists but is down "not found".
        guard let id = index(adapter) else {
            throw RadioError(.adapterUnusable, "\(adapter) is not a kernel Bluetooth device name: give one such as hci0 (see `ls /sys/class/bluetooth`).")
        }
        var up = false
        switch kernel.deviceIsUp(id, &up) {
        case 0:
            break
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            throw RadioError(.adapterUnusable, "This kernel has no Bluetooth support (\(String(cString: strerror(EAFNOSUPPORT)))), so the raw HCI backend cannot reach \(adapter); load the bluetooth module, or use --backend sim without hardware.")
        case ENODEV:
            throw RadioError(.adapterMissing, "Bluetooth adapter \(adapter) not found (see `nearplay adapters` or `ls /sys/class/bluetooth`).")
        case let code:
            throw failure(code, "look up", adapter)
        }
        guard up else {
            // Waiting may help: bluetoothd powers adapters on as it starts, a person may run btmgmt.
            throw RadioError(.adapterMissing, "Bluetooth adapter \(adapter) is powered off: power it on (`bluetoothctl power on` while bluetoothd runs, else `sudo btmgmt --index \(id) power on`).")
        }
        var fd: Int32 = -1
        let opened = kernel.openRaw(id, &fd)
        guard opened == 0 else { throw failure(opened, "open", adapter) }
        var closeOnFailure = true
        defer { if closeOnFailure { Glibc.close(fd) } }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META_EVENT] { hci_filter_set_event(Int32(event), &filter) }
        let filtered = withUnsafeBytes(of: &filter) { kernel.setFilter(fd, $0.baseAddress!, HCIKernel.filterLength) }
        guard filtered == 0 else { throw failure(filtered, "set the event filter on", adapter) }
        closeOnFailure = false
        return fd
    }

    /// A failed call on an HCI socket, as a sentence: EPERM and EACCES explain the capabilities.
    static func failure(_ code: Int32, _ action: String, _ adapter: String) -> RadioError {
        switch code {
        case EPERM, EACCES:
            return RadioError(.permissionDenied, permissionAdvice(adapter, action: action, code: code))
        case ENODEV:
            return RadioError(.adapterMissing, "Bluetooth adapter \(adapter) went away (\(String(cString: strerror(code)))).")
        case ENETDOWN:
            return RadioError(.adapterMissing, "Bluetooth adapter \(adapter) was powered off: power it on (`bluetoothctl power on`, or `sudo btmgmt --index N power on` without bluetoothd).")
        default:
            return RadioError(.adapterUnusable, "Cannot \(action) Bluetooth adapter \(adapter) through a raw HCI socket: \(String(cString: strerror(code))).")
        }
    }

    static func permissionAdvice(_ adapter: String, action: String, code: Int32) -> String {
        "Not allowed to \(action) Bluetooth adapter \(adapter) through a raw HCI socket (\(String(cString: strerror(code)))): "
            + "the hci backend needs CAP_NET_RAW and CAP_NET_ADMIN. Grant them with "
            + "`sudo setcap cap_net_raw,cap_net_admin+eip $(command -v nearplay)` (or AmbientCapabilities= in the systemd unit), "
            + "or use --backend bluez; see hardware-notes.md."
    }

    /// True when a `bluetoothd` process runs (its name in `/proc/PID/comm`): then the kernel and
    /// bluetoothd manage the controller and may scan or advertise under us.
    static func bluetoothdIsRunning(proc: String = "/proc") -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: proc) else { return false }
        for entry in entries where entry.first?.isNumber == true {
            if let comm = try? String(contentsOfFile: "\(proc)/\(entry)/comm", encoding: .utf8),
               comm.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd" { return true }
        }
        return false
    }
}
