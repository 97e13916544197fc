import ArgumentParser
import Radio

/// `--backend` takes the live backends only: a replay is `nearplay replay`'s.
extension RadioBackend: ExpressibleByArgument {
    public init?(argument: String) {
        guard let backend = RadioBackend(rawValue: argument), backend.isLive else { return nil }
        self = backend
    }

    public static var allValueStrings: [String] { live.map(\.rawValue) }
}

/// Options that choose the radio backend, shared by every command that uses the radio (`scan`,
/// `advertise`, `record`, and any newer one): they only fill a ``RadioSelection``, which makes the
/// scanner and the advertiser.
struct BackendOptions: ParsableArguments {
    @Option(help: "The radio: bluez (Bluetooth through bluetoothd), hci (the controller itself through a raw HCI socket, without bluetoothd; needs CAP_NET_RAW and CAP_NET_ADMIN, see hardware-notes.md) or sim (the simulated air of `nearplay air`).")
    var backend: RadioBackend = .bluez

    @Option(help: "With --backend sim: the hub's socket. Default: $XDG_RUNTIME_DIR/nearplay/air.sock (or /tmp/nearplay-$UID/air.sock).")
    var airSocket: String?

    @Option(help: "With --backend sim: the scenario device to be, e.g. alice.")
    var device: String?

    func validate() throws {
        if let problem = selection(adapter: nil).problem(name: Self.optionName) { throw ValidationError(problem) }
    }

    static func optionName(_ setting: RadioSelection.Setting) -> String {
        switch setting {
        case .adapter: "--adapter"
        case .device: "--device"
        case .airSocket: "--air-socket"
        case .hciScan: "--hci-active, --hci-scan-interval and --hci-scan-window"
        }
    }

    /// The radio these options choose.
    func selection(adapter: String?, rssiThreshold: Int = -110, hciScan: HCIScanSettings = HCIScanSettings()) -> RadioSelection {
        RadioSelection(backend: backend, adapter: adapter, rssiThreshold: rssiThreshold, hciScan: hciScan,
                       airSocket: airSocket, device: device)
    }

    func scanner(adapter: String?, rssiThreshold: Int, hciScan: HCIScanSettings = HCIScanSettings()) -> any AdvertisementScanner {
        selection(adapter: adapter, rssiThreshold: rssiThreshold, hciScan: hciScan).makeScanner()
    }

    func advertiser(adapter: String?) -> any Advertiser {
        selection(adapter: adapter).makeAdvertiser()
    }
}

/// How `--backend hci` scans, for the commands that scan.
struct HCIScanOptions: ParsableArguments {
    @Flag(help: "With --backend hci: scan actively (send scan requests, report scan responses too). Default: passive.")
    var hciActive = false

    @Option(help: "With --backend hci: scan interval in milliseconds (2.5 to 10240).")
    var hciScanInterval: Double = 100

    @Option(help: "With --backend hci: scan window in milliseconds (2.5 to the interval; equal to listen all the time).")
    var hciScanWindow: Double?

    func validate() throws {
        guard (2.5...10240).contains(hciScanInterval) else { throw ValidationError("--hci-scan-interval must be between 2.5 and 10240 ms.") }
        if let hciScanWindow, !(2.5...hciScanInterval).contains(hciScanWindow) {
            throw ValidationError("--hci-scan-window must be between 2.5 ms and the scan interval (\(hciScanInterval) ms).")
        }
    }

    var settings: HCIScanSettings {
        HCIScanSettings(active: hciActive, interval: .microseconds(Int(hciScanInterval * 1000)),
                        window: .microseconds(Int((hciScanWindow ?? hciScanInterval) * 1000)))
    }
}
