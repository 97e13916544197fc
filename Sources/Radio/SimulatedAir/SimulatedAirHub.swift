import BeaconFrames
import Glibc
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The room the simulated air's clients share: a server on a Unix stream socket that makes each
/// advertiser transmit at its interval and delivers each frame to every scanning device with an
/// RSSI from the scenario's scripted positions (see ``AirSimulation`` for the model).
///
/// Clients (``SimulatedAirScanner``, ``SimulatedAirAdvertiser``) say which scenario device they
/// are; a device the scenario does not name is refused with a message. The hub also transmits
/// the scenario's static beacons itself. Time runs on `clock`, `speed` scenario seconds per
/// second of it; every 10 ms of the clock the hub makes the transmissions due and writes each
/// scanner's frames in one write. Everything runs on one NIO event loop.
public final class SimulatedAirHub<C: Clock>: Sendable where C.Duration == Duration {
    public let scenario: AirScenario
    public let socketPath: String
    /// Scenario seconds per second of `clock`.
    public let speed: Double
    private let clock: C
    private let logger: Logger
    private let listener: Int32
    /// Whether ``run()`` gave the listening socket to NIO, which then closes it.
    private let listenerTaken = Mutex(false)
    private let state: Mutex<HubState>

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
        if !listenerTaken.withLock({ $0 }) { Glibc.close(listener) }
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
        listenerTaken.withLock { $0 = true }
        defer { unlink(socketPath) }
        // The socket listens since init (bound by UnixSocket.listen, so it never replaces a live
        // hub's socket); NIO accepts on it from here.
        // One event loop carries the listener, every connection and the clock's task (below), so
        // the frames written each tick go straight into the channels, with no wake of another
        // thread per connection.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor.of(loop)
        let server = try await ServerBootstrap(group: loop, childGroup: loop)
            .bind(NIOBSDSocket.Handle(listener)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AirMessageBatcher())
                    return try NIOAsyncChannel<[AirMessage], ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        logger.info("Simulated air on \(socketPath): \(scenario.devices.count) devices, \(scenario.beacons.count) beacons, speed \(speed).")
        // Accepting and serving run outside this task's cancellation, in a task awaited below:
        // a cancelled wait for the next connection would drop connections NIO accepted but had
        // not handed over yet, and NIO traps on those. The hub ends them by closing instead.
        let accepting = Task(executorPreference: executor) {
            try? await server.executeThenClose { accepted in
                // Each connection is served in a child task, which ends when its channel closes.
                await withDiscardingTaskGroup { connections in
                    do {
                        for try await connection in accepted {
                            connections.addTask { await self.serve(connection) }
                        }
                    } catch {
                        self.logger.warning("Simulated air hub: \(error)")
                    }
                }
            }
        }
        await withTaskExecutorPreference(executor) {
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
        // Every connection closes (clients reconnect to the next hub), and so does the listener:
        // what it accepted meanwhile is closed as it is handed over.
        state.withLock { state in
            state.stopping = true
            for id in Array(state.connections.keys) { close(id, in: &state, reason: nil) }
        }
        try? await server.channel.close()
        await accepting.value
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
        for id in Array(state.connections.keys) where state.connections[id]!.hasOutput || state.connections[id]!.outletBacklog > 0 {
            state.connections[id]!.handOverOutput()
        }
    }

    // MARK: - Connections (a task each)

    /// Serves one client until it leaves, breaks the protocol, is refused or the hub stops: its
    /// messages are handled under the state lock as they arrive. What the hub has for it is
    /// written straight to its channel (``AirOutlet``), so a scanner that does not read never
    /// holds up the clock's task.
    private func serve(_ channel: NIOAsyncChannel<[AirMessage], ByteBuffer>) async {
        let outlet = AirOutlet(channel.channel)
        let id: Int? = state.withLock { state in
            guard !state.stopping else { return nil }
            let id = state.nextConnection
            state.nextConnection += 1
            state.connections[id] = HubConnection(id: id, outlet: outlet)
            return id
        }
        guard let id else {
            outlet.finish()
            try? await channel.executeThenClose { _, _ in }
            return
        }
        logger.debug("Connection \(id) opened.")
        do {
            try await channel.executeThenClose { inbound, _ in
                var ending: String?
                do {
                    for try await batch in inbound {
                        let open = state.withLock { state in
                            for message in batch where state.connections[id] != nil { handle(message, from: id, in: &state) }
                            state.connections[id]?.handOverOutput()
                            return state.connections[id] != nil
                        }
                        if !open { break }
                    }
                } catch is CancellationError {
                } catch {
                    ending = "\(error)"
                }
                state.withLock { close(id, in: &$0, reason: ending) }
                // What was handed over last (a refusal, say) is out before the channel closes.
                await outlet.finished()
            }
        } catch {
            logger.debug("Connection \(id): \(error)")
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
        // What is left (a refusal) still goes out; then the connection closes.
        var last = connection
        last.handOverOutput()
        connection.outlet.finish()
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
    /// Set when the hub stops: connections handed over after that are closed at once.
    var stopping = false
    /// Every address a rotate was given, so none is given twice.
    var addressesGiven = Set<BluetoothAddress>()
    var framesDelivered = 0
    /// Frames dropped for connections since closed.
    var framesDropped = 0
}

/// One client, as the hub sees it.
private struct HubConnection {
    let id: Int
    /// Where its bytes go to be written.
    let outlet: AirOutlet
    var device: String?
    var transmitter: AirSimulation.TransmitterID?
    var listener: AirSimulation.ListenerID?
    /// Bytes for the client not yet handed to the outlet.
    var output: [UInt8] = []
    /// Bytes in the outlet, not yet written, when last handed over: an upper bound, as the
    /// writer only takes.
    var outletBacklog = 0
    var dropped = 0

    init(id: Int, outlet: AirOutlet) {
        self.id = id
        self.outlet = outlet
    }

    /// Frames waiting for a scanner that does not read beyond this many bytes are dropped, as a
    /// radio too busy to listen would miss them.
    static let largestBacklog = 4 << 20

    var hasOutput: Bool { !output.isEmpty }

    mutating func queue(_ delivery: AirSimulation.Delivery, logger: Logger) {
        guard output.count + outletBacklog < Self.largestBacklog else {
            if dropped == 0 { logger.notice("\(device ?? "connection \(id)") does not keep up; dropping frames for it.") }
            dropped += 1
            return
        }
        AirMessage.appendAdvertisement(time: delivery.time, address: delivery.address, rssi: delivery.rssi,
                                       data: delivery.data, to: &output)
    }

    /// Hands what is waiting to the writer (at most once a tick, so a scanner's frames go out in
    /// one write) and learns how much the writer has not taken yet.
    mutating func handOverOutput() {
        outletBacklog = outlet.push(&output)
    }
}

/// Where the hub's bytes for one client go: straight into its channel, once a tick, from the
/// clock's task or the connection's, both on the channel's event loop. Counts what was handed
/// over and not yet written, so a scanner that does not read has its frames dropped
/// (``HubConnection/largestBacklog``) rather than queued without bound.
private final class AirOutlet: Sendable {
    private let channel: any Channel
    private let unwritten = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)
    /// Succeeds once the last write after ``finish()`` completed (or failed) and the channel was
    /// asked to close.
    private let done: EventLoopPromise<Void>

    init(_ channel: any Channel) {
        self.channel = channel
        done = channel.eventLoop.makePromise()
    }

    /// Writes `bytes` (leaving it empty, its capacity kept) and returns how many bytes handed
    /// over are not written yet.
    func push(_ bytes: inout [UInt8]) -> Int {
        if !bytes.isEmpty, !ended.load(ordering: .acquiring) {
            let count = bytes.count
            unwritten.add(count, ordering: .relaxed)
            let buffer = channel.allocator.buffer(bytes: bytes)
            bytes.removeAll(keepingCapacity: true)
            channel.writeAndFlush(buffer).whenComplete { _ in self.unwritten.subtract(count, ordering: .relaxed) }
        }
        return unwritten.load(ordering: .relaxed)
    }

    /// No more writes: once what was handed over is out, the channel closes.
    func finish() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Writes complete in order: once this empty one has, the last (a refusal, say) is out,
        // and closing cannot drop it.
        channel.writeAndFlush(ByteBuffer()).whenComplete { [channel, done] _ in
            channel.close(promise: nil)
            done.succeed()
        }
    }

    /// Returns once ``finish()`` was called and its last write is done.
    func finished() async {
        try? await done.futureResult.get()
    }
}
