import Foundation

/// The radio backends, by the names commands (`--backend`) and the agent's configuration
/// (`radio.backend`) use: the one list of them.
public enum RadioBackend: String, Sendable, Hashable, CaseIterable, Codable {
    /// bluetoothd over D-Bus (the default).
    case bluez
    /// The controller itself through a raw HCI socket (libbluetooth), without bluetoothd.
    case hci
    /// The simulated air of `nearplay air`.
    case sim
    /// A recorded trace or capture played at its recorded pace: the agent's `radio.file`. Not a
    /// live radio (it hears what was recorded and cannot advertise), so no ``RadioSelection``
    /// makes it and no command's `--backend` offers it; commands replay with `nearplay replay`.
    case replay

    /// The backends a ``RadioSelection`` makes, in the order `--backend` lists them.
    public static let live: [RadioBackend] = [.bluez, .hci, .sim]

    public var isLive: Bool { self != .replay }
}

/// A chosen live radio and its settings: the one place that turns a backend name into a scanner
/// and an advertiser, for `scan`, `advertise`, `record`, the agent and the location beacon alike.
/// Its backend is a live one (``RadioBackend/live``): ``problem(name:)`` says so otherwise.
public struct RadioSelection: Sendable {
    public var backend: RadioBackend
    /// bluez and hci: `hci0` and so on. BlueZ takes the first powered adapter when nil, hci `hci0`.
    public var adapter: String?
    /// Advertisements weaker than this (dBm) are not reported (bluez and hci).
    public var rssiThreshold: Int
    /// hci: the scan's type and timing.
    public var hciScan: HCIScanSettings
    /// hci: command timeout and state folder.
    public var hciOptions: HCIOptions
    /// sim: the hub's socket (default ``SimulatedAir/defaultSocketPath(environment:)``) and the
    /// scenario device to be.
    public var airSocket: String?
    public var device: String?

    public init(backend: RadioBackend, adapter: String? = nil, rssiThreshold: Int = -110,
                hciScan: HCIScanSettings = HCIScanSettings(), hciOptions: HCIOptions = HCIOptions(),
                airSocket: String? = nil, device: String? = nil) {
        self.backend = backend
        self.adapter = adapter
        self.rssiThreshold = rssiThreshold
        self.hciScan = hciScan
        self.hciOptions = hciOptions
        self.airSocket = airSocket
        self.device = device
    }

    /// Why these settings cannot work, naming the setting by `name` (how the caller spells its
    /// options or keys); nil when they can.
    public func problem(name: (Setting) -> String) -> String? {
        if let adapter, !Self.isAdapterName(adapter) {
            return "\(name(.adapter)) takes an adapter name such as hci0, not “\(adapter)”."
        }
        switch backend {
        case .replay:
            return "the replay backend is not a live radio: it plays a recorded trace."
        case .sim:
            guard let device, !device.isEmpty else {
                return "the sim backend needs \(name(.device)) NAME, one of the devices in the hub's scenario."
            }
            if let problem = SimulatedAir.problem(withDeviceName: device) { return "\(name(.device)): \(problem)." }
        case .bluez, .hci:
            if device != nil || airSocket != nil {
                return "\(name(.device)) and \(name(.airSocket)) are for the simulated air: choose the sim backend."
            }
        }
        if backend != .hci, hciScan != HCIScanSettings() {
            return "\(name(.hciScan)) is for the hci backend."
        }
        return nil
    }

    /// The settings ``problem(name:)`` can name.
    public enum Setting: Sendable { case adapter, device, airSocket, hciScan }

    /// `hci` followed by digits.
    public static func isAdapterName(_ name: String) -> Bool {
        name.hasPrefix("hci") && name.count > 3 && name.dropFirst(3).allSatisfy(\.isNumber)
    }

    var socketPath: String { airSocket ?? SimulatedAir.defaultSocketPath() }
    var hciController: HCIController { .adapter(adapter ?? "hci0") }

    /// The radio in a few words, for logs and trace headers.
    public var description: String {
        switch backend {
        case .bluez: "BlueZ" + (adapter.map { " (\($0))" } ?? "")
        case .hci: "raw HCI on \(hciController.name)"
        case .sim: "the simulated air at \(socketPath) as \(device ?? "")"
        case .replay: "a replay"
        }
    }

    public func makeScanner() -> any AdvertisementScanner { makeRadio().scanner }

    public func makeAdvertiser() -> any Advertiser { makeRadio().advertiser }

    /// A scanner and an advertiser on one radio (one BlueZ connection for both), and a phrase
    /// naming it for logs. Only for a live backend: a replay needs its trace read first (the
    /// agent's ``ReplayScanner``), which this module cannot do.
    public func makeRadio() -> (scanner: any AdvertisementScanner, advertiser: any Advertiser, description: String) {
        switch backend {
        case .replay:
            preconditionFailure("RadioSelection makes live radios only; check problem(name:) first")
        case .bluez:
            let manager = BlueZManager()
            return (BlueZScanner(manager: manager, adapterName: adapter, rssiThreshold: rssiThreshold),
                    BlueZAdvertiser(manager: manager, adapterName: adapter), description)
        case .hci:
            let controller = hciController
            return (HCIScanner(controller: controller, active: hciScan.active, interval: hciScan.interval, window: hciScan.window,
                               rssiThreshold: rssiThreshold, options: hciOptions),
                    HCIAdvertiser(controller: controller, options: hciOptions), description)
        case .sim:
            let socket = socketPath
            return (SimulatedAirScanner(socketPath: socket, device: device ?? ""),
                    SimulatedAirAdvertiser(socketPath: socket, device: device ?? ""), description)
        }
    }
}

/// How the hci backend scans: passive or active, and its interval and window.
public struct HCIScanSettings: Sendable, Hashable {
    public var active: Bool
    public var interval: Duration
    public var window: Duration

    public init(active: Bool = false, interval: Duration = .milliseconds(100), window: Duration = .milliseconds(100)) {
        self.active = active
        self.interval = interval
        self.window = window
    }
}
