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
    /// `.adapterUnusable` when waiting may help (no such adapter yet), any other code when not.
    public var open: @Sendable () throws -> Int32

    public init(name: String, open: @escaping @Sendable () throws -> Int32) {
        self.name = name
        self.open = open
    }

    /// The kernel's HCI device `adapter` (e.g. `hci0`), its socket filtered to the events the
    /// backend reads: Command Complete, Command Status and LE Meta.
    public static func adapter(_ adapter: String) -> HCIController {
        HCIController(name: adapter) { try HCIDevice.open(adapter) }
    }
}

/// The kernel side: libbluetooth calls on `hciN`, each failure turned into a ``RadioError`` that
/// says what to do.
enum HCIDevice {
    static func open(_ adapter: String) throws(RadioError) -> Int32 {
        let id = hci_devid(adapter)
        guard id >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT || code == EPROTONOSUPPORT {
                throw RadioError(.adapterUnusable, "This kernel has no Bluetooth support (\(String(cString: strerror(code)))), so the raw HCI backend cannot reach \(adapter); load the bluetooth module, or use --backend sim without hardware.")
            }
            throw RadioError(.adapterMissing, "Bluetooth adapter \(adapter) not found (see `nearplay adapters` or `ls /sys/class/bluetooth`).")
        }
        let fd = hci_open_dev(id)
        guard fd >= 0 else { throw failure(errno, "open", adapter) }
        var closeOnFailure = true
        defer { if closeOnFailure { Glibc.close(fd) } }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META_EVENT] { hci_filter_set_event(Int32(event), &filter) }
        guard setsockopt(fd, Int32(SOL_HCI), Int32(HCI_FILTER), &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            throw failure(errno, "set the event filter on", adapter)
        }
        var info = hci_dev_info()
        if hci_devinfo(id, &info) == 0 {
            let up = withUnsafeMutablePointer(to: &info.flags) { hci_test_bit(Int32(HCI_UP), $0) } != 0
            guard up else {
                throw RadioError(.adapterUnusable, "Bluetooth adapter \(adapter) is down: power it on (`sudo btmgmt --index \(id) power on`, or `bluetoothctl power on` while bluetoothd runs).")
            }
        }
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
            return RadioError(.adapterUnusable, "Bluetooth adapter \(adapter) is down: power it on (`bluetoothctl power on`, or `sudo btmgmt power on` without bluetoothd).")
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
