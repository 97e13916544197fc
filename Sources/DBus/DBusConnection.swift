import Glibc
import Synchronization

/// A connection to a message bus: method calls, signals, exported objects.
///
/// Each connection has one owner, a thread of its own (see `ConnectionLoop`) that blocks on the
/// socket and is the only code touching libdbus; this type is the thread-safe handle to it. When
/// the bus goes away every pending call fails with `org.freedesktop.DBus.Error.Disconnected`,
/// signal streams end with that error, and ``waitUntilClosed()`` returns: reconnecting is the
/// caller's decision.
public final class DBusConnection: Sendable {
    /// Our unique name on the bus, e.g. `:1.42`.
    public let uniqueName: String
    private let loop: ConnectionLoop
    private let nextToken = Atomic<UInt64>(1)

    public static let busName = "org.freedesktop.DBus"
    public static let busPath: DBusObjectPath = "/org/freedesktop/DBus"

    private init(loop: ConnectionLoop, uniqueName: String) {
        self.loop = loop
        self.uniqueName = uniqueName
    }

    deinit {
        loop.submit(.init(run: { $0.requestStop() }, fail: { _ in }))
    }

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else `/var/run/dbus/system_bus_socket`.
    /// `signalCoalescing` as for ``connect(address:signalCoalescing:)``.
    public static func system(signalCoalescing: Duration = .zero) async throws -> DBusConnection {
        try await connect(address: systemBusAddress, signalCoalescing: signalCoalescing)
    }

    public static var systemBusAddress: String {
        if let address = getenv("DBUS_SYSTEM_BUS_ADDRESS"), address.pointee != 0 {
            return String(cString: address)
        }
        return "unix:path=/var/run/dbus/system_bus_socket"
    }

    /// Connects to the bus at `address` (D-Bus address syntax, e.g. `unix:path=/tmp/bus`) and
    /// registers with it.
    ///
    /// `signalCoalescing`: while no call waits for a reply, data that arrives is left in the socket
    /// this long and then read in one batch, and as long as signals keep coming they are read on
    /// that beat. A steady stream (bluetoothd sends one signal per advertisement received) then
    /// costs one wake-up per interval instead of one per signal, for at most that much delay.
    /// Zero (the default) reads everything as soon as it arrives.
    public static func connect(address: String, signalCoalescing: Duration = .zero) async throws -> DBusConnection {
        let loop = try ConnectionLoop(signalCoalescing: signalCoalescing)
        let uniqueName: String = try await withCheckedThrowingContinuation { continuation in
            loop.start(address: address) { result in continuation.resume(with: result) }
        }
        return DBusConnection(loop: loop, uniqueName: uniqueName)
    }

    // MARK: - Calls

    /// Sends a method call and waits for its reply. An error reply is thrown as ``DBusError``; no
    /// reply within `timeout` is `org.freedesktop.DBus.Error.NoReply`. Cancelling the task stops
    /// waiting.
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws -> DBusMessage {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                loop.submit(.init(
                    run: { $0.call(message, token: token, timeout: timeout, continuation: continuation) },
                    fail: { continuation.resume(throwing: $0) }))
            }
        } onCancel: {
            loop.submit(.init(run: { $0.cancelCall(token: token) }, fail: { _ in }))
        }
    }

    /// Calls `interface.member` on `path` at `destination` and returns the reply's body.
    public func call(destination: String, path: DBusObjectPath, interface: String, member: String,
                     body: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        try await call(.methodCall(destination: destination, path: path, interface: interface,
                                   member: member, body: body), timeout: timeout).body
    }

    /// Sends messages that expect no reply (signals, or calls flagged no-reply), in order.
    public func send(_ messages: [DBusMessage]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.submit(.init(
                run: { loop in
                    do {
                        for message in messages { try loop.send(message) }
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                },
                fail: { continuation.resume(throwing: $0) }))
        }
    }

    public func send(_ message: DBusMessage) async throws {
        try await send([message])
    }

    /// Sends `copies` copies of one message, marshalling it once: for load generators (simulated
    /// radios, benchmarks) that repeat the same signal, as bluetoothd does for a beacon whose
    /// advertisement does not change.
    public func send(_ message: DBusMessage, copies: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.submit(.init(
                run: { loop in
                    do {
                        try loop.send(message, copies: copies)
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                },
                fail: { continuation.resume(throwing: $0) }))
        }
    }

    // MARK: - Signals

    /// Subscribes to the signals matching any of `rules`, in the order they arrive.
    ///
    /// Returns once the bus has accepted every rule, so anything read from the bus afterwards
    /// (`GetManagedObjects`, say) cannot miss a signal sent in between. Ending the iteration (or
    /// cancelling its task, or dropping the stream) removes the subscription. At most `bufferLimit`
    /// signals wait for a slow reader; beyond that the oldest are dropped.
    public func signals(matching rules: [MatchRule], bufferLimit: Int = 65_536) async throws -> DBusSignalStream {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        let loop = self.loop
        let queue = SignalQueue(limit: bufferLimit) {
            loop.submit(.init(run: { loop in
                guard loop.removeSubscription(id: id) != nil else { return }
                for rule in rules {
                    var removal = DBusMessage.methodCall(
                        destination: DBusConnection.busName, path: DBusConnection.busPath,
                        interface: DBusConnection.busName, member: "RemoveMatch", body: [.string(rule.description)])
                    removal.noReplyExpected = true
                    _ = try? loop.send(removal)
                }
            }, fail: { _ in }))
        }
        let stream = DBusSignalStream(queue: queue)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            loop.submit(.init(
                run: { loop in
                    loop.addSubscription(id: id, .init(rules: rules, queue: queue))
                    done.resume()
                },
                fail: { done.resume(throwing: $0) }))
        }
        do {
            for rule in rules {
                _ = try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                   member: "AddMatch", body: [.string(rule.description)])
            }
        } catch {
            queue.finish(throwing: error)
            throw error
        }
        return stream
    }

    // MARK: - Exported objects

    /// Serves `object` at its path, replacing what was there. When an exported object manager lies
    /// above it, `InterfacesAdded` is emitted.
    public func export(_ object: DBusExportedObject) async throws {
        try await run { $0.export(object) }
    }

    /// Stops serving the object at `path` (emitting `InterfacesRemoved` under an object manager).
    public func unexport(_ path: DBusObjectPath) async throws {
        try await run { $0.unexport(path) }
    }

    // MARK: - The bus

    /// The unique name owning `name`, or nil when nobody owns it.
    public func nameOwner(of name: String, timeout: Duration = .seconds(5)) async throws -> String? {
        do {
            let body = try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                      member: "GetNameOwner", body: [.string(name)], timeout: timeout)
            return body.first?.stringValue
        } catch let error as DBusError where error.name == DBusError.nameHasNoOwnerName {
            return nil
        }
    }

    /// Asks the bus for a well-known name; throws unless we become its primary owner.
    public func requestName(_ name: String) async throws {
        let body = try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                  member: "RequestName", body: [.string(name), .uint32(4)])  // 4: do not queue
        guard body.first?.intValue == 1 || body.first?.intValue == 4 else {
            throw DBusError(name: DBusError.failedName, message: "the bus name \(name) is owned by another connection")
        }
    }

    // MARK: - Closing

    /// Closes the connection after sending what is queued. Pending calls fail, signal streams end.
    public func close() {
        loop.submit(.init(run: { $0.requestStop() }, fail: { _ in }))
    }

    /// Returns when the connection is closed, with the reason (nil after ``close()``).
    public func waitUntilClosed() async -> DBusError? {
        await withCheckedContinuation { continuation in
            loop.submit(.init(run: { $0.addCloseWaiter(continuation) }, fail: { continuation.resume(returning: $0) }))
        }
    }

    /// False once the connection has closed for any reason.
    public var isOpen: Bool { loop.closedReason == nil }

    private func run(_ body: @escaping @Sendable (ConnectionLoop) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.submit(.init(run: { body($0); continuation.resume() }, fail: { continuation.resume(throwing: $0) }))
        }
    }
}
