import BeaconFrames
import Glibc
import Logging

/// An ``AdvertisementScanner`` on the simulated air: hears, through the hub at `socketPath`, what the other
/// devices and the static beacons transmit, with the RSSI the scenario gives at this device's
/// position.
///
/// Waits for the hub when it is not running yet and reconnects when it restarts, backing off
/// from 0.1 s to 2 s. Advertisement times are seconds since the scan began: the hub's scenario
/// clock while connected (real seconds at speed 1), never going backwards across reconnections.
/// Addresses are random static ones derived from each sender's name
/// (``SimulatedAir/address(of:)``), or, for a device advertising a rotating identity, the
/// non-resolvable private address the hub gave its current identity.
public struct SimulatedAirScanner: AdvertisementScanner {
    public var socketPath: String
    /// The scenario device this scanner is.
    public var device: String
    public var logger: Logger

    /// How long frames wait in the socket between reads: one wake-up per 50 ms in a busy room.
    static let readBeat: Duration = .milliseconds(50)

    public init(socketPath: String, device: String, logger: Logger = Logger(label: "nearplay.radio.air")) {
        self.socketPath = socketPath
        self.device = device
        self.logger = logger
    }

    public func scan(_ receive: (Advertisement) async -> Void) async throws {
        if let problem = SimulatedAir.problem(withDeviceName: device) {
            throw RadioError(.simulatedAirRefused, "Cannot scan on the simulated air as “\(device)”: \(problem).")
        }
        let began = ContinuousClock.now
        var last = 0.0
        var link = AirClientLink(socketPath: socketPath, device: device, logger: logger)
        while let socket = try await link.connect() {
            do {
                try await AirClientConnection.run(socket: socket, path: socketPath, device: device, readBeat: Self.readBeat) { connection in
                    // Scan time = origin.scan + (hub time − origin.hub), set by the hub's welcome.
                    var origin: (hub: Double, scan: Double)?
                    // A refusal arrives on the stream even when this write finds the hub gone.
                    try? connection.send(.scan)
                    batches: for try await batch in connection.batches {
                        if Task.isCancelled { break }
                        for message in batch {
                            switch message {
                            case .welcome(let time, let address):
                                origin = (time, max(last, began.duration(to: .now).inSeconds))
                                link.joined(as: address, doing: "Scanning")
                            case .advertisement(let time, let address, let rssi, let data):
                                // The welcome comes first; should it have been dropped with a lagging
                                // batch, the first frame sets the origin instead.
                                let from = origin ?? (time, max(last, began.duration(to: .now).inSeconds))
                                origin = from
                                last = max(last, from.scan + time - from.hub)
                                await receive(Advertisement(time: last, address: address, addressType: .random,
                                                            rssi: rssi, data: data))
                            case .refused(let message):
                                throw RadioError(.simulatedAirRefused, message)
                            default:
                                logger.warning("The simulated air hub sent \(message) to a scanner; reconnecting.")
                                break batches
                            }
                        }
                    }
                }
            } catch let error as RadioError {
                throw error
            } catch {
                link.lost(error)
            }
            if Task.isCancelled { return }
            guard await link.pause() else { return }
        }
    }
}

/// The connect–wait–reconnect cycle both clients share, and what they say about it.
struct AirClientLink {
    let socketPath: String
    let device: String
    let logger: Logger
    private var backoff = Backoff(first: .milliseconds(100), limit: .seconds(2))
    private var waitingSaid = false

    init(socketPath: String, device: String, logger: Logger) {
        self.socketPath = socketPath
        self.device = device
        self.logger = logger
    }

    /// A socket connected to the hub, for ``AirClientConnection/run(socket:path:device:readBeat:_:)``,
    /// waiting for one as long as it takes; nil once cancelled. Throws ``RadioError`` when waiting
    /// cannot help (no permission, a path that cannot be a socket).
    mutating func connect() async throws(RadioError) -> Int32? {
        while !Task.isCancelled {
            do {
                return try UnixSocket.connect(path: socketPath)
            } catch {
                if error.code == EACCES || error.code == EPERM {
                    throw RadioError(.permissionDenied, "\(error); the hub runs as another user: run it as this one, or use its socket's owner.")
                }
                if !error.isHubAbsent { throw RadioError(.simulatedAirUnusable, "\(error).") }
                if !waitingSaid {
                    waitingSaid = true
                    logger.notice("Waiting for the simulated air hub at \(socketPath) (\(error)); start it with `nearplay air --scenario FILE`.")
                } else {
                    logger.debug("Still no simulated air hub at \(socketPath) (\(error)); retrying in \(backoff.delay).")
                }
            }
            do { try await backoff.wait() } catch { return nil }
        }
        return nil
    }

    mutating func joined(as address: BluetoothAddress, doing what: String) {
        backoff.reset()
        waitingSaid = false
        logger.notice("\(what) on the simulated air at \(socketPath) as \(device) (\(address)).")
    }

    mutating func lost(_ error: any Error) {
        if Task.isCancelled { return }
        logger.warning("Lost the simulated air hub at \(socketPath) (\(error)); reconnecting.")
        waitingSaid = true
    }

    /// Waits before reconnecting; false once cancelled.
    mutating func pause() async -> Bool {
        if !waitingSaid {
            logger.notice("The simulated air hub at \(socketPath) went away; reconnecting.")
            waitingSaid = true
        }
        do {
            try await backoff.wait()
            return true
        } catch {
            return false
        }
    }
}
