import BeaconFrames
import Logging
import Synchronization

/// An ``Advertiser`` on the simulated air: asks the hub at `socketPath` to transmit the payload
/// as this scenario device, at the payload's interval, until cancelled.
///
/// Waits for the hub when it is not running yet and advertises again when it restarts, backing
/// off from 0.1 s to 2 s; throws ``RadioError`` when the hub refuses the device.
///
/// ``advertise(_:)`` transmits from the device's own address (``SimulatedAir/address(of:)``).
/// ``advertise(rotating:)`` keeps one connection and sends each payload in a rotate message: the
/// hub gives the device a fresh non-resolvable private address and switches address and data
/// between two transmissions, so no frame carries the new identity from the old address or the
/// reverse. After the hub restarts, the current payload goes on the air again from a new address.
public struct SimulatedAirAdvertiser: Advertiser {
    public var socketPath: String
    /// The scenario device this advertiser is.
    public var device: String
    public var logger: Logger

    public init(socketPath: String, device: String, logger: Logger = Logger(label: "nearplay.radio.air")) {
        self.socketPath = socketPath
        self.device = device
        self.logger = logger
    }

    public func advertise(_ payload: AdvertisingPayload) async throws {
        let request = AirMessage.advertise(interval: payload.interval.inSeconds, data: payload.advertisingData)
        try await run(onConnect: { connection in
            // A refusal arrives on the stream even when this write finds the hub gone.
            try? connection.send(request)
        })
    }

    public func advertise(rotating payloads: AsyncStream<AdvertisingPayload>) async throws {
        let link = RotatingLink()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await payload in payloads { link.offer(payload) }
            }
            defer { group.cancelAll() }
            try await run(
                onConnect: { connection in link.connected(connection) },
                onDisconnect: { link.disconnected() })
        }
    }

    /// Connects (again and again, as the hub comes and goes) until cancelled; `onConnect` says
    /// what this advertiser wants on each new connection.
    private func run(onConnect: (AirClientConnection) -> Void, onDisconnect: () -> Void = {}) async throws {
        if let problem = SimulatedAir.problem(withDeviceName: device) {
            throw RadioError(.simulatedAirRefused, "Cannot advertise on the simulated air as “\(device)”: \(problem).")
        }
        var link = AirClientLink(socketPath: socketPath, device: device, logger: logger)
        while let socket = try await link.connect() {
            do {
                try await AirClientConnection.run(socket: socket, path: socketPath, device: device) { connection in
                    onConnect(connection)
                    defer { onDisconnect() }
                    do {
                        for try await batch in connection.batches {
                            for message in batch {
                                switch message {
                                case .welcome(_, let address):
                                    link.joined(as: address, doing: "Advertising")
                                case .rotated(_, let address):
                                    logger.info("\(device) advertises from \(address) on the simulated air.")
                                case .refused(let message):
                                    throw RadioError(.simulatedAirRefused, message)
                                default:
                                    logger.debug("Ignoring \(message) from the simulated air hub.")
                                }
                            }
                        }
                    } catch is CancellationError {
                        // Cancelled while waiting for the hub's next message: stop below.
                    }
                    if Task.isCancelled {
                        // The hub stops transmitting when the connection closes; saying so first is polite.
                        try? connection.send(.withdraw)
                    }
                }
            } catch let error as RadioError {
                throw error
            } catch {
                link.lost(error)
            }
            if Task.isCancelled {
                logger.notice("Stopped advertising on the simulated air as \(device).")
                return
            }
            guard await link.pause() else { return }
        }
    }
}

/// The current payload of a rotating advertiser and the connection it is on: each payload goes
/// to each connection exactly once (a second rotate with the same payload would give the same
/// identity a second address), whichever of the two comes first.
private final class RotatingLink: Sendable {
    private struct State {
        var payload: AdvertisingPayload?
        var connection: AirClientConnection?
    }

    private let state = Mutex(State())

    func offer(_ payload: AdvertisingPayload) {
        state.withLock { state in
            state.payload = payload
            if let connection = state.connection { Self.send(payload, on: connection) }
        }
    }

    func connected(_ connection: AirClientConnection) {
        state.withLock { state in
            state.connection = connection
            if let payload = state.payload { Self.send(payload, on: connection) }
        }
    }

    func disconnected() {
        state.withLock { $0.connection = nil }
    }

    /// A refusal or a lost hub shows on the connection's stream; the write's error adds nothing.
    private static func send(_ payload: AdvertisingPayload, on connection: AirClientConnection) {
        try? connection.send(.rotate(interval: payload.interval.inSeconds, data: payload.advertisingData))
    }
}
