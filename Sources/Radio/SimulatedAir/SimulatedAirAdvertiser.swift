import Logging

/// An ``Advertiser`` on the simulated air: asks the hub at `socketPath` to transmit the payload
/// as this scenario device, at the payload's interval, until cancelled.
///
/// Waits for the hub when it is not running yet and advertises again when it restarts, backing
/// off from 0.1 s to 2 s; throws ``RadioError`` when the hub refuses the device.
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
        if let problem = SimulatedAir.problem(withDeviceName: device) {
            throw RadioError(.simulatedAirRefused, "Cannot advertise on the simulated air as “\(device)”: \(problem).")
        }
        let request = AirMessage.advertise(interval: payload.interval.inSeconds, data: payload.advertisingData)
        var link = AirClientLink(socketPath: socketPath, device: device, logger: logger)
        while let connection = try await link.connect() {
            // A refusal arrives on the stream even when this write finds the hub gone.
            try? connection.send(request)
            do {
                for try await batch in connection.batches {
                    for message in batch {
                        switch message {
                        case .welcome(_, let address):
                            link.joined(as: address, doing: "Advertising")
                        case .refused(let message):
                            throw RadioError(.simulatedAirRefused, message)
                        default:
                            logger.debug("Ignoring \(message) from the simulated air hub.")
                        }
                    }
                }
            } catch let error as RadioError {
                connection.close()
                throw error
            } catch {
                link.lost(error)
            }
            if Task.isCancelled {
                // The hub stops transmitting when the connection closes; saying so first is polite.
                try? connection.send(.withdraw)
                connection.close()
                logger.notice("Stopped advertising on the simulated air as \(device).")
                return
            }
            connection.close()
            guard await link.pause() else { return }
        }
    }
}
