import BeaconFrames
import Dispatch
import Glibc
import Logging
import Synchronization

/// The room the simulated air's clients share: a server on a Unix stream socket that makes each
/// advertiser transmit at its interval and delivers each frame to every scanning device with an
/// RSSI from the scenario's scripted positions (see ``AirSimulation`` for the model).
///
/// Clients (``SimulatedAirScanner``, ``SimulatedAirAdvertiser``) say which scenario device they
/// are; a device the scenario does not name is refused with a message. The hub also transmits
/// the scenario's static beacons itself. Time runs on `clock`, `speed` scenario seconds per
/// second of it; every 10 ms of the clock the hub makes the transmissions due and writes each
/// scanner's frames in one write.
public final class SimulatedAirHub<C: Clock>: Sendable where C.Duration == Duration {
    public let scenario: AirScenario
    public let socketPath: String
    /// Scenario seconds per second of `clock`.
    public let speed: Double
    private let clock: C
    private let logger: Logger
    private let listener: Int32
    /// Whether ``run()`` gave the listening socket to its read source, whose cancel handler then
    /// closes it: a descriptor closed while libdispatch still watches it leaves that number
    /// registered, and the next source on a reused number never fires.
    private let listenerWatched = Mutex(false)
    private let state: Mutex<HubState>
    private let queue = DispatchQueue(label: "nearplay.air.hub")

    /// How often the hub makes due transmissions and writes to scanners, in clock time.
    public static var tick: Duration { .milliseconds(10) }
    /// Listens on `socketPath` (creating its folder, owner-only, when missing) without accepting
    /// yet: clients that connect wait until ``run()``.
    public init(scenario: AirScenario, socketPath: String, speed: Double = 1, clock: C,
                logger: Logger = Logger(label: "nearplay.air")) throws(SocketError) {
        self.scenario = scenario
        self.socketPath = socketPath
        self.speed = speed.isFinite && speed > 0 ? speed : 1
        self.clock = clock
        self.logger = logger
        let folder = socketPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !folder.isEmpty, access(folder, F_OK) != 0, mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw SocketError("create the folder of", path: socketPath, code: errno)
        }
        listener = try UnixSocket.listen(path: socketPath)
        state = Mutex(HubState(simulation: AirSimulation(scenario: scenario)))
    }

    deinit {
        if !listenerWatched.withLock({ $0 }) { Glibc.close(listener) }
    }

    /// Who is on the air now, and what the hub has sent.
    public struct Census: Sendable, Hashable {
        /// Connections that said hello.
        public var clients: Int
        public var scanning: Int
        public var advertising: Int
        /// Advertisement frames the scanners heard (after loss and sensitivity) since the hub
        /// started, including those then dropped.
        public var framesDelivered: Int
        /// Frames dropped because a scanner did not read them in time.
        public var framesDropped: Int
        /// Rotate messages handled (each gave a device a new address) since the hub started.
        public var rotations: Int
    }

    public var census: Census {
        state.withLock { state in
            let connections = state.connections.values
            return Census(clients: connections.count { $0.device != nil },
                          scanning: connections.count { $0.listener != nil },
                          advertising: connections.count { $0.transmitter != nil },
                          framesDelivered: state.framesDelivered,
                          framesDropped: state.framesDropped + connections.reduce(0) { $0 + $1.dropped },
                          rotations: state.addressesGiven.count)
        }
    }

    /// Accepts clients and runs the air until the calling task is cancelled; then closes every
    /// connection (clients reconnect to the next hub) and removes the socket file. Scenario time
    /// starts at 0 when it is called; call it once per hub. (Its shape is swift-service-lifecycle's
    /// `Service`, so the agent can run a hub in its `ServiceGroup` with a one-line conformance.)
    public func run() async throws {
        let start = clock.now
        let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: queue)
        source.setEventHandler { [self] in acceptWaiting() }
        source.setCancelHandler { [listener] in Glibc.close(listener) }
        listenerWatched.withLock { $0 = true }
        source.resume()
        logger.info("Simulated air on \(socketPath): \(scenario.devices.count) devices, \(scenario.beacons.count) beacons, speed \(speed).")
        defer {
            source.cancel()
            state.withLock { state in
                for id in Array(state.connections.keys) { close(id, in: &state, reason: nil) }
            }
            unlink(socketPath)
        }
        var deadline = start
        while !Task.isCancelled {
            deadline = deadline.advanced(by: Self.tick)
            let now = clock.now
            if deadline <= now { deadline = now.advanced(by: Self.tick) }
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                break
            }
            let time = scenarioTime(start.duration(to: clock.now))
            state.withLock { transmit(upTo: time, in: &$0) }
        }
    }

    private func scenarioTime(_ elapsed: Duration) -> Double {
        elapsed.inSeconds * speed
    }

    // MARK: - Transmitting (the clock's task)

    private func transmit(upTo time: Double, in state: inout HubState) {
        var deliveries: [AirSimulation.Delivery] = []
        state.simulation.advance(to: time) { deliveries.append($0) }
        state.framesDelivered += deliveries.count
        for delivery in deliveries {
            guard let id = state.connectionByListener[delivery.listener] else { continue }
            state.connections[id]?.queue(delivery, logger: logger)
        }
        for id in Array(state.connections.keys) where state.connections[id]!.hasOutput {
            do {
                try state.connections[id]!.flush(path: socketPath)
            } catch {
                close(id, in: &state, reason: "\(error)")
            }
        }
    }

    // MARK: - Connections (the dispatch queue)

    private func acceptWaiting() {
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(listener, path: socketPath) else { return }
                fd = accepted
            } catch {
                logger.warning("\(error)")
                return
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            let id = state.withLock { state in
                let id = state.nextConnection
                state.nextConnection += 1
                state.connections[id] = HubConnection(id: id, fd: fd, source: ReadSource(source: source))
                return id
            }
            source.setEventHandler { [self] in readWaiting(id) }
            source.setCancelHandler { Glibc.close(fd) }
            source.resume()
            logger.debug("Connection \(id) opened.")
        }
    }

    private func readWaiting(_ id: Int) {
        // The descriptor is closed only by the read source's cancel handler, which runs on this
        // queue after this handler: reading outside the lock is safe.
        guard let fd = state.withLock({ $0.connections[id]?.fd }) else { return }
        var received: [UInt8] = []
        var ending: String??
        // 64 KiB a read: a client sends a few small messages, so one read takes all there is.
        withUnsafeTemporaryAllocation(byteCount: 65_536, alignment: 8) { buffer in
            while true {
                do {
                    guard let count = try UnixSocket.read(fd, into: buffer, path: socketPath) else { return }
                    if count == 0 {
                        ending = .some(nil)
                        return
                    }
                    received.append(contentsOf: buffer[..<count])
                    if count < buffer.count { return }
                } catch {
                    ending = .some("\(error)")
                    return
                }
            }
        }
        state.withLock { state in
            guard state.connections[id] != nil else { return }
            state.connections[id]!.decoder.append(received)
            while state.connections[id] != nil {
                let message: AirMessage?
                do {
                    message = try state.connections[id]!.decoder.next()
                } catch {
                    close(id, in: &state, reason: "\(error)")
                    return
                }
                guard let message else { break }
                handle(message, from: id, in: &state)
            }
            if state.connections[id]?.hasOutput == true {
                do {
                    try state.connections[id]!.flush(path: socketPath)
                } catch {
                    close(id, in: &state, reason: "\(error)")
                }
            }
            if let ending { close(id, in: &state, reason: ending) }
        }
    }

    private func handle(_ message: AirMessage, from id: Int, in state: inout HubState) {
        let device = state.connections[id]!.device
        switch (message, device) {
        case (.hello(let version, let name), nil):
            guard version == AirMessage.version else {
                refuse(id, "The simulated air hub speaks protocol \(AirMessage.version) and the client \(version): "
                    + "run the hub and its clients from the same nearplay build.", in: &state)
                return
            }
            guard state.simulation.knows(device: name) else {
                let known = scenario.devices.keys.sorted().joined(separator: ", ")
                refuse(id, "The simulated air hub does not know the device “\(name)”: its scenario (\(scenario.source)) "
                    + "has \(known.isEmpty ? "no devices" : known). Add “\(name)” under \"devices\" or use one of those names.",
                    in: &state)
                return
            }
            state.connections[id]!.device = name
            let welcome = AirMessage.welcome(time: state.simulation.now, address: SimulatedAir.address(of: name))
            welcome.encode(into: &state.connections[id]!.output)
            logger.info("\(name) joined the simulated air (connection \(id)).")
        case (.hello, .some(let name)):
            close(id, in: &state, reason: "\(name) said hello twice")
        case (_, nil):
            refuse(id, "A simulated air client must say hello (its device name) first.", in: &state)
        case (.advertise(let interval, let data), .some(let name)):
            if let previous = state.connections[id]!.transmitter { state.simulation.stopAdvertising(previous) }
            state.connections[id]!.transmitter = state.simulation.startAdvertising(device: name, data: data, interval: interval)
            logger.info("\(name) advertises \(data.count) bytes every \(Int((interval * 1000).rounded())) ms.")
        case (.rotate(let interval, let data), .some(let name)):
            // Data and address change together under the lock the transmissions take: each frame
            // has the old pair or the new one. The address is new to this hub's run.
            var address: BluetoothAddress
            repeat { address = .nonResolvablePrivate() } while !state.addressesGiven.insert(address).inserted
            let switched = state.connections[id]!.transmitter.map {
                state.simulation.change($0, data: data, interval: interval, address: address)
            } ?? false
            if !switched {
                state.connections[id]!.transmitter = state.simulation.startAdvertising(device: name, data: data, interval: interval,
                                                                                       address: address)
            }
            AirMessage.rotated(time: state.simulation.now, address: address).encode(into: &state.connections[id]!.output)
            logger.info("\(name) advertises \(data.count) bytes from \(address) every \(Int((interval * 1000).rounded())) ms.")
        case (.withdraw, .some(let name)):
            if let previous = state.connections[id]!.transmitter {
                state.simulation.stopAdvertising(previous)
                state.connections[id]!.transmitter = nil
                logger.info("\(name) stopped advertising.")
            }
        case (.scan, .some(let name)):
            guard state.connections[id]!.listener == nil,
                  let listener = state.simulation.startListening(device: name) else { return }
            state.connections[id]!.listener = listener
            state.connectionByListener[listener] = id
            logger.info("\(name) scans.")
        case (.welcome, .some(let name)), (.refused, .some(let name)), (.advertisement, .some(let name)), (.rotated, .some(let name)):
            close(id, in: &state, reason: "\(name) sent a message only the hub sends")
        }
    }

    /// Tells the client why and closes the connection.
    private func refuse(_ id: Int, _ message: String, in state: inout HubState) {
        logger.notice("Refused connection \(id): \(message)")
        AirMessage.refused(message).encode(into: &state.connections[id]!.output)
        try? state.connections[id]!.flush(path: socketPath)
        close(id, in: &state, reason: nil)
    }

    private func close(_ id: Int, in state: inout HubState, reason: String?) {
        guard let connection = state.connections.removeValue(forKey: id) else { return }
        if let transmitter = connection.transmitter { state.simulation.stopAdvertising(transmitter) }
        if let listener = connection.listener {
            state.simulation.stopListening(listener)
            state.connectionByListener[listener] = nil
        }
        let name = connection.device ?? "connection \(id)"
        if let reason {
            logger.warning("Closed \(name): \(reason).")
        } else if connection.device != nil {
            logger.info("\(name) left the simulated air.")
        }
        state.framesDropped += connection.dropped
        if connection.dropped > 0 {
            logger.notice("\(name) missed \(connection.dropped) frames it did not read in time.")
        }
        connection.source.source.cancel()
    }
}

extension SimulatedAirHub where C == ContinuousClock {
    /// A hub on the real clock.
    public convenience init(scenario: AirScenario, socketPath: String, speed: Double = 1,
                            logger: Logger = Logger(label: "nearplay.air")) throws(SocketError) {
        try self.init(scenario: scenario, socketPath: socketPath, speed: speed, clock: ContinuousClock(), logger: logger)
    }
}

/// Everything the hub's connections and its clock's task share, under one lock.
private struct HubState {
    var simulation: AirSimulation
    var connections: [Int: HubConnection] = [:]
    var connectionByListener: [AirSimulation.ListenerID: Int] = [:]
    var nextConnection = 0
    /// Every address a rotate was given, so none is given twice.
    var addressesGiven = Set<BluetoothAddress>()
    var framesDelivered = 0
    /// Frames dropped for connections since closed.
    var framesDropped = 0
}

/// One client, as the hub sees it.
private struct HubConnection {
    let id: Int
    let fd: Int32
    let source: ReadSource
    var decoder = AirFrameDecoder()
    var device: String?
    var transmitter: AirSimulation.TransmitterID?
    var listener: AirSimulation.ListenerID?
    /// Bytes not yet written, from `written` on.
    var output: [UInt8] = []
    var written = 0
    var dropped = 0

    init(id: Int, fd: Int32, source: ReadSource) {
        self.id = id
        self.fd = fd
        self.source = source
    }

    /// Frames waiting for a scanner that does not read beyond this many bytes are dropped, as a
    /// radio too busy to listen would miss them.
    static let largestBacklog = 4 << 20

    var hasOutput: Bool { written < output.count }

    mutating func queue(_ delivery: AirSimulation.Delivery, logger: Logger) {
        guard output.count - written < Self.largestBacklog else {
            if dropped == 0 { logger.notice("\(device ?? "connection \(id)") does not keep up; dropping frames for it.") }
            dropped += 1
            return
        }
        AirMessage.appendAdvertisement(time: delivery.time, address: delivery.address, rssi: delivery.rssi,
                                       data: delivery.data, to: &output)
    }

    mutating func flush(path: String) throws(SocketError) {
        written += try UnixSocket.write(fd, output, from: written, path: path)
        if written == output.count {
            output.removeAll(keepingCapacity: true)
            written = 0
        } else if written > 65_536 {
            output.removeFirst(written)
            written = 0
        }
    }
}

/// A connection's read source. Dispatch sources may be used from any thread.
private struct ReadSource: @unchecked Sendable {
    let source: any DispatchSourceRead
}
