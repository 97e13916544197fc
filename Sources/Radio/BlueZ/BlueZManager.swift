import DBus
import Logging

/// One process's BlueZ client: the bus connection, the local copy of bluetoothd's objects and the
/// reconnect loop, shared by every ``BlueZScanner`` and ``BlueZAdvertiser`` built on it (as
/// bleak's manager is shared by its scanners and clients).
///
/// The connection opens when the first scanner or advertiser starts and closes when the last one
/// stops. While it is open the manager follows bluetoothd's signals (subscribed before
/// `GetManagedObjects`, so nothing falls between the two), reads them on a 10 ms beat
/// (``BlueZSession/signalCoalescing``), keeps its copy of the objects current and hands each
/// user the changes in order. A lost bus is retried after 0.25 s, doubling to 8 s; bluetoothd
/// stopping or restarting is waited out. Users only decide what to do with the adapter.
public actor BlueZManager {
    /// The bus bluetoothd is on; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
    public nonisolated let busAddress: String?
    public nonisolated let logger: Logger

    /// What a user of the manager hears, in order.
    enum Event: Sendable {
        /// Connected, or bluetoothd (re)appeared: the objects were read afresh, and are as given
        /// (the changes that follow apply to them). Whatever the user set up before (discovery, a
        /// registration) is gone; start over on `session`.
        case ready(BlueZSession, BlueZObjects)
        /// bluetoothd left the bus; `ready` follows when it is back.
        case serviceStopped
        /// The bus connection was lost; the manager reconnects and `ready` follows.
        case disconnected
        /// Signals applied to the objects, in the order they came.
        case changes([BlueZObjects.Change])
    }

    private var objects = BlueZObjects()
    private var session: BlueZSession?
    /// Whether `objects` reflects bluetoothd on `session` (false while connecting or reloading).
    private var isLoaded = false
    private var users: [UInt64: AsyncStream<Event>.Continuation] = [:]
    private var nextUser: UInt64 = 1
    private var runner: Task<Void, Never>?
    /// Advertisement object paths handed out, so advertisers on one manager do not collide.
    private var advertisementPaths = Set<DBusObjectPath>()

    /// Bus connections opened so far: one per connect or reconnect, however many users share it.
    public private(set) var connectionsOpened = 0

    public init(busAddress: String? = nil, logger: Logger = Logger(label: "nearplay.radio.bluez")) {
        self.busAddress = busAddress
        self.logger = logger
    }

    /// Our unique name on the bus (e.g. `:1.42`) while connected; nil otherwise.
    public var uniqueName: String? { session?.connection.uniqueName }

    /// The adapters bluetoothd has, as of the last signal; empty while not connected.
    public var adapters: [BlueZAdapter] { objects.adapters.sorted { $0.path < $1.path } }

    // MARK: - Users

    /// Registers a user; its stream starts with `ready` when the objects are loaded (at once if
    /// they already are). Opens the connection for the first user.
    func subscribe() -> (id: UInt64, events: AsyncStream<Event>) {
        let id = nextUser
        nextUser += 1
        let (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(65_536))
        users[id] = continuation
        if let session, isLoaded { continuation.yield(.ready(session, objects)) }
        if runner == nil {
            runner = Task { await self.run() }
        }
        return (id, events)
    }

    /// Removes a user; the last one out closes the connection. Call it after the user has undone
    /// what it did on the bus (stopped discovery, unregistered), so those calls still go out.
    func unsubscribe(_ id: UInt64) {
        users.removeValue(forKey: id)?.finish()
        guard users.isEmpty, let runner else { return }
        runner.cancel()
        self.runner = nil
        session?.close()
        session = nil
        isLoaded = false
        objects = BlueZObjects()
    }

    /// A path for an advertisement object no other advertiser of this manager is serving:
    /// ``BlueZAdvertiser/objectPath`` first.
    func claimAdvertisementPath() -> DBusObjectPath {
        var index = 0
        while true {
            let path = DBusObjectPath("/org/nearplay/advertisement\(index)")!
            if advertisementPaths.insert(path).inserted { return path }
            index += 1
        }
    }

    func releaseAdvertisementPath(_ path: DBusObjectPath) {
        advertisementPaths.remove(path)
    }

    // MARK: - The objects

    /// The adapter to use: the one named `name`, else the first powered one, else the first;
    /// with `advertising`, only among those that can advertise.
    func chooseAdapter(named name: String?, advertising: Bool = false) -> BlueZAdapter? {
        let candidates = advertising ? objects.adapters.filter { $0.advertising != nil } : objects.adapters
        return BlueZAdapter.choose(from: candidates, named: name)
    }

    func adapter(at path: DBusObjectPath) -> BlueZAdapter? { objects.adapter(at: path) }

    func device(at path: DBusObjectPath) -> BlueZDevice? { objects.device(at: path) }

    func devices(on adapter: DBusObjectPath) -> [BlueZDevice] { objects.devices(on: adapter) }

    // MARK: - The connection

    /// Connects, follows the signals until the connection drops, and reconnects, until the last
    /// user leaves (which cancels this task).
    private func run() async {
        var backoff = Backoff()
        while !Task.isCancelled {
            do {
                let session = try await BlueZSession.open(address: busAddress)
                connectionsOpened += 1
                guard !Task.isCancelled else {
                    session.close()
                    return
                }
                self.session = session
                backoff.reset()
                try await follow(session)
            } catch {
                if Task.isCancelled { return }
                logger.warning("Lost the system bus (\(error)); reconnecting in \(backoff.delay).")
            }
            if Task.isCancelled { return }
            session?.close()
            session = nil
            isLoaded = false
            objects = BlueZObjects()
            publish(.disconnected)
            do { try await backoff.wait() } catch { return }
        }
    }

    /// Loads the objects, then applies signals a batch at a time and passes the changes on.
    /// Returns (throws) when the connection drops.
    private func follow(_ session: BlueZSession) async throws {
        try await reload(session)
        var signals = session.signals.makeAsyncIterator()
        var changes: [BlueZObjects.Change] = []
        while let batch = try await signals.nextBatch() {
            guard !Task.isCancelled else { return }
            changes.reserveCapacity(batch.count)
            for signal in batch {
                let change = objects.apply(signal)
                switch change {
                case .irrelevant:
                    continue
                case .ownerChanged(let owner):
                    flush(&changes)
                    if owner == nil {
                        // The (empty) objects stay loaded: a new user is told there is no adapter.
                        publish(.serviceStopped)
                    } else {
                        try await reload(session)
                    }
                case .interfacesAdded(let path, let interfaces, _):
                    if interfaces.contains(BlueZ.adapterInterface),
                       !objects.has(path, interface: BlueZ.advertisingManagerInterface)
                    {
                        await readAdvertisingManager(at: path, on: session)
                    }
                    changes.append(change)
                default:
                    changes.append(change)
                }
            }
            flush(&changes)
        }
        throw DBusError.disconnected("the bus connection closed")
    }

    private func reload(_ session: BlueZSession) async throws {
        isLoaded = false
        let loaded = try await session.loadObjects()
        // The last user may have left meanwhile (or a new connection taken over).
        guard !Task.isCancelled else { throw CancellationError() }
        objects = loaded
        isLoaded = true
        publish(.ready(session, loaded))
    }

    /// Some bluetoothd builds (and the test mock) announce an adapter before, or without, its
    /// LEAdvertisingManager1; ask for it directly. An adapter that has none simply stays without.
    private func readAdvertisingManager(at path: DBusObjectPath, on session: BlueZSession) async {
        guard let reply = try? await session.connection.call(
            destination: BlueZ.service, path: path, interface: BlueZ.propertiesInterface, member: BlueZ.Method.getAll,
            body: [.string(BlueZ.advertisingManagerInterface)], timeout: .seconds(5)),
            !Task.isCancelled,
            let properties = reply.first?.stringKeyedValue,
            objects.has(path, interface: BlueZ.adapterInterface)
        else { return }
        objects.set(path, interface: BlueZ.advertisingManagerInterface, properties: properties)
    }

    private func flush(_ changes: inout [BlueZObjects.Change]) {
        guard !changes.isEmpty else { return }
        publish(.changes(changes))
        changes.removeAll(keepingCapacity: true)
    }

    private func publish(_ event: Event) {
        for user in users.values { user.yield(event) }
    }
}
