import ArgumentParser
import Radio

/// Which radio `scan` and `advertise` use.
enum RadioBackend: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// bluetoothd over D-Bus.
    case bluez
    /// The simulated air of `nearplay air`.
    case sim
}

/// Options that choose the radio backend, shared by `scan` and `advertise`.
struct BackendOptions: ParsableArguments {
    @Option(help: "The radio: bluez (Bluetooth through bluetoothd) or sim (the simulated air of `nearplay air`).")
    var backend: RadioBackend = .bluez

    @Option(help: "With --backend sim: the hub's socket. Default: $XDG_RUNTIME_DIR/nearplay/air.sock (or /tmp/nearplay-$UID/air.sock).")
    var airSocket: String?

    @Option(help: "With --backend sim: the scenario device to be, e.g. alice.")
    var device: String?

    func validate() throws {
        switch backend {
        case .sim:
            guard let device else {
                throw ValidationError("--backend sim needs --device NAME, one of the devices in the hub's scenario.")
            }
            if let problem = SimulatedAir.problem(withDeviceName: device) { throw ValidationError("--device: \(problem).") }
        case .bluez:
            if device != nil || airSocket != nil {
                throw ValidationError("--device and --air-socket are for the simulated air: add --backend sim.")
            }
        }
    }

    var socketPath: String { airSocket ?? SimulatedAir.defaultSocketPath() }

    func scanner(adapter: String?, rssiThreshold: Int) -> any AdvertisementScanner {
        switch backend {
        case .bluez: BlueZScanner(adapterName: adapter, rssiThreshold: rssiThreshold)
        case .sim: SimulatedAirScanner(socketPath: socketPath, device: device ?? "")
        }
    }

    func advertiser(adapter: String?) -> any Advertiser {
        switch backend {
        case .bluez: BlueZAdvertiser(adapterName: adapter)
        case .sim: SimulatedAirAdvertiser(socketPath: socketPath, device: device ?? "")
        }
    }
}
