import DBus
import Logging

/// One process's BlueZ client: the bus connection, the local copy of bluetoothd's objects and the
/// reconnect loop, shared by every ``BlueZScanner`` and ``BlueZAdvertiser`` built on it (as
/// bleak's manager is shared by its scanners and clients).
///
/// The connection opens when the first scanner or advertiser starts and closes when the last one
/// stops. While it is open the manager follows bluetoothd's signals (subscribed before
/// `GetManagedObjects`, so nothing falls between the two), reads them on a 10 ms beat
/// (`BlueZSession.signalCoalescing`; the README has the figures), keeps its copy of the objects
/// current and hands each user the changes in order, a batch at a time. A lost bus is retried
/// after 0.25 s, doubling to 8 s; bluetoothd stopping or restarting is waited out. Users only
/// decide what to do with the adapter.
///
/// The manager has no task of its own: whichever user asks for events while nobody else is
/// reading reads the bus for everyone. A lone scanner is so woken by the bus itself, as it was
/// with a connection of its own. A reading task of the manager's, handing batches over, cost
/// 4.4 % of a core and 500–530 context switches a second at 1,000 signals/s in the benchmark,
/// against 3.9–4.2 % and 200–250 this way (the same as a scanner alone before the manager).
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
    private var users: [UInt64: User] = [:]
    private var nextUser: UInt64 = 1
    /// Whether a user's task is reading the bus for everyone (one at a time).
    private var reading = false
    /// Counts the connection's lives: a read that started in an earlier one is discarded.
    private var generation = 0
    private var backoff = Backoff()
    /// After a failed connection, the next attempt waits `backoff` first.
    private var waitBeforeConnecting = false
    /// Advertisement object paths handed out, so advertisers on one manager do not collide.
    private var advertisementPaths = Set<DBusObjectPath>()

    private struct User {
        var pending: [Event] = []
        /// Set while the user waits for another user's read to bring it something.
        var waiter: CheckedContinuation<Void, Never>?
        /// Whether it wants Device1 property changes (a scanner does; an advertiser would only be
        /// woken for nothing, a thousand times a second in a busy room).
        var followsDevices: Bool
    }

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

    /// Registers a user; its events start with `ready` once the objects are loaded (at once if
    /// they already are). The first user's first ``events(for:)`` opens the connection.
    func subscribe(followingDevices: Bool) -> UInt64 {
        let id = nextUser
        nextUser += 1
        var user = User(followsDevices: followingDevices)
        if let session, isLoaded { user.pending.append(.ready(session, objects)) }
        users[id] = user
        return id
    }

    /// Removes a user; the last one out closes the connection. Call it after the user has undone
    /// what it did on the bus (stopped discovery, unregistered), so those calls still go out.
    func unsubscribe(_ id: UInt64) {
        users.removeValue(forKey: id)?.waiter?.resume()
        // One of those left takes over reading, if the one leaving was the one who would have.
        wakeWaiters()
        guard users.isEmpty else { return }
        generation += 1
        session?.close()
        session = nil
        isLoaded = false
        objects = BlueZObjects()
        backoff.reset()
        waitBeforeConnecting = false
    }

    /// The events for user `id` since its last call, waiting for at least one. When no other
    /// user is reading the bus, the calling task reads it for everyone: a scanner's own task is
    /// then woken by the bus, with no hand-over between tasks on the hot path. A user that does
    /// not follow devices leaves the reading to the scanners while there are any (the bus waits
    /// for them while they handle what they read). Throws `CancellationError` when the task is cancelled (another user's
    /// task takes over reading).
    func events(for id: UInt64) async throws -> [Event] {
        while true {
            try Task.checkCancellation()
            guard let user = users[id] else { throw CancellationError() }
            if !user.pending.isEmpty {
                users[id]!.pending = []
                return user.pending
            }
            let leaveToScanner = !user.followsDevices && users.values.contains { $0.followsDevices }
            if reading || leaveToScanner {
                if !reading { wakeWaiters(followingDevices: true) }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        users[id]?.waiter = continuation
                    }
                } onCancel: {
                    Task { await self.stopWaiting(id) }
                }
                continue
            }
            reading = true
            do {
                try await read()
            } catch {
                // Someone else reads from here on.
                reading = false
                wakeWaiters()
                throw error
            }
            reading = false
            // The others wait on, unless this read brought them something: this task reads again
            // when it comes back for more.
            wakeWaiters(withEventsOnly: true)
        }
    }

    private func stopWaiting(_ id: UInt64) {
        let waiter = users[id]?.waiter
        users[id]?.waiter = nil
        waiter?.resume()
    }

    /// Wakes the waiting users (those with events take them, one of the others reads next);
    /// `withEventsOnly`: only those with events; `followingDevices`: only scanners.
    private func wakeWaiters(withEventsOnly: Bool = false, followingDevices: Bool = false) {
        for (id, user) in users where user.waiter != nil {
            if withEventsOnly, user.pending.isEmpty { continue }
            if followingDevices, !user.followsDevices { continue }
            users[id]!.waiter = nil
            user.waiter!.resume()
        }
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

    /// One step for everyone: connects (after the backoff, when the last attempt failed), or
    /// reloads the objects, or takes the next batch of signals and applies it.
    private func read() async throws {
        let generation = self.generation
        guard let session else {
            if waitBeforeConnecting {
                // The actor's copy moves on now; the sleep happens outside it.
                let delay = backoff.delay
                backoff.advance()
                try await Task.sleep(for: delay)
            }
            guard generation == self.generation else { return }
            do {
                let opened = try await BlueZSession.open(address: busAddress)
                guard generation == self.generation, !users.isEmpty else {
                    opened.close()
                    return
                }
                connectionsOpened += 1
                self.session = opened
                backoff.reset()
                waitBeforeConnecting = false
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                guard generation == self.generation else { return }
                lost(error)
            }
            return
        }
        do {
            if !isLoaded {
                try await reload(session)
                return
            }
            guard let batch = try await session.signals.takeBatch() else {
                throw DBusError.disconnected("the bus connection closed")
            }
            guard generation == self.generation else { return }
            try await apply(batch, on: session)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            guard generation == self.generation else { return }
            lost(error)
        }
    }

    /// Applies signals in order and passes the changes on. On bluetoothd's return the objects
    /// are read again; a cancellation in the middle leaves them to be read again by the next
    /// reader (the rest of the batch is then covered by the new copy).
    private func apply(_ batch: [DBusMessage], on session: BlueZSession) async throws {
        var changes: [BlueZObjects.Change] = []
        changes.reserveCapacity(batch.count)
        for signal in batch {
            let change = objects.apply(signal)
            switch change {
            case .irrelevant:
                continue
            case .ownerChanged(let owner):
                publish(changes)
                changes.removeAll()
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
        publish(changes)
    }

    private func reload(_ session: BlueZSession) async throws {
        let generation = self.generation
        isLoaded = false
        let loaded = try await session.loadObjects()
        guard generation == self.generation else { return }
        objects = loaded
        isLoaded = true
        publish(.ready(session, loaded))
    }

    /// The connection is gone (or never came): tell the users, and wait before the next attempt.
    private func lost(_ error: any Error) {
        logger.warning("Lost the system bus (\(error)); reconnecting in \(backoff.delay).")
        session?.close()
        session = nil
        isLoaded = false
        objects = BlueZObjects()
        waitBeforeConnecting = true
        publish(.disconnected)
    }

    /// Some bluetoothd builds (and the test mock) announce an adapter before, or without, its
    /// LEAdvertisingManager1; ask for it directly. An adapter that has none simply stays without.
    private func readAdvertisingManager(at path: DBusObjectPath, on session: BlueZSession) async {
        guard let reply = try? await session.connection.call(
            destination: BlueZ.service, path: path, interface: BlueZ.propertiesInterface, member: BlueZ.Method.getAll,
            body: [.string(BlueZ.advertisingManagerInterface)], timeout: .seconds(5)),
            let properties = reply.first?.stringKeyedValue,
            objects.has(path, interface: BlueZ.adapterInterface)
        else { return }
        objects.set(path, interface: BlueZ.advertisingManagerInterface, properties: properties)
    }

    /// Queues changes for the users that follow them: all of them for scanners, all but Device1
    /// property changes for the others.
    private func publish(_ changes: [BlueZObjects.Change]) {
        guard !changes.isEmpty else { return }
        var withoutDevices: [BlueZObjects.Change]?
        for id in users.keys {
            if users[id]!.followsDevices {
                users[id]!.pending.append(.changes(changes))
                continue
            }
            if withoutDevices == nil {
                withoutDevices = changes.filter {
                    if case .propertiesChanged(_, BlueZ.deviceInterface, _, _) = $0 { false } else { true }
                }
            }
            if !withoutDevices!.isEmpty { users[id]!.pending.append(.changes(withoutDevices!)) }
        }
    }

    private func publish(_ event: Event) {
        for id in users.keys { users[id]!.pending.append(event) }
    }
}
