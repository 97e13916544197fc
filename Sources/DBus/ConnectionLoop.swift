import CDBus
import Glibc
import Synchronization
import SystemSupport

/// The single owner of one libdbus connection: a thread that blocks in `poll(2)` on the
/// connection's socket and a wake-up pipe, and is the only code that touches the libdbus handle,
/// pending calls, subscriptions and exported objects.
///
/// Other threads talk to it by submitting commands (closures run on the loop thread) and writing a
/// byte to the wake-up pipe. Nothing runs unless the socket, the pipe or a call's deadline says so:
/// no polling interval, no busy wait.
final class ConnectionLoop: @unchecked Sendable {
    struct Command: Sendable {
        /// Runs on the loop thread while the connection is open.
        let run: @Sendable (ConnectionLoop) -> Void
        /// Runs instead, on any thread, once the connection is closed.
        let fail: @Sendable (DBusError) -> Void
    }

    private struct Inbox {
        var commands: [Command] = []
        var closedReason: DBusError?
    }

    private struct PendingCall {
        let token: UInt64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<DBusMessage, any Error>
    }

    struct Subscription {
        let rules: [MatchRule]
        let queue: SignalQueue
    }

    private let inbox = Mutex(Inbox())
    private let wakeReader: Int32
    private let wakeWriter: Int32
    /// How long arriving data is left in the socket before it is read while no call waits for a
    /// reply (see ``DBusConnection/connect(address:signalCoalescing:)``).
    private let signalCoalescing: Duration

    // Loop-thread state.
    private var connection: OpaquePointer?
    private var socket: Int32 = -1
    private var pending: [UInt32: PendingCall] = [:]
    private var serialByToken: [UInt64: UInt32] = [:]
    private var subscriptions: [UInt64: Subscription] = [:]
    private(set) var objects: [DBusObjectPath: DBusExportedObject] = [:]
    private var closeWaiters: [CheckedContinuation<DBusError?, Never>] = []
    private var stopRequested = false
    private var closedByUser = false
    /// Messages that could not be decoded (bad or unsupported types); they are dropped, or answered
    /// with an error when they were method calls.
    private(set) var undecodableMessages = 0
    private var strings = StringInterner()

    init(signalCoalescing: Duration) throws {
        self.signalCoalescing = max(.zero, signalCoalescing)
        do {
            (wakeReader, wakeWriter) = try SystemCall.pipe(nonBlocking: true)
        } catch {
            throw DBusError(name: DBusError.failedName, message: "cannot create the wake-up pipe: \(error.reason)")
        }
    }

    deinit {
        SystemCall.close(wakeReader)
        SystemCall.close(wakeWriter)
    }

    // MARK: - Starting

    /// Starts the thread, which connects to `address`, says Hello to the bus and then serves the
    /// connection. `connected` gets the unique name, or the error that ended the attempt.
    func start(address: String, connected: @escaping @Sendable (Result<String, DBusError>) -> Void) {
        let context = Unmanaged.passRetained(StartContext(loop: self, address: address, connected: connected))
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<StartContext>.fromOpaque(raw!).takeRetainedValue()
            context.loop.threadMain(address: context.address, connected: context.connected)
            return nil
        }, context.toOpaque())
        if status != 0 {
            context.release()
            let error = DBusError(name: DBusError.failedName, message: "cannot start the D-Bus thread (error \(status))")
            markClosed(error)
            connected(.failure(error))
        } else {
            pthread_detach(thread)
        }
    }

    private final class StartContext {
        let loop: ConnectionLoop
        let address: String
        let connected: @Sendable (Result<String, DBusError>) -> Void
        init(loop: ConnectionLoop, address: String, connected: @escaping @Sendable (Result<String, DBusError>) -> Void) {
            self.loop = loop
            self.address = address
            self.connected = connected
        }
    }

    private func threadMain(address: String, connected: @Sendable (Result<String, DBusError>) -> Void) {
        switch open(address: address) {
        case .failure(let error):
            markClosed(error)
            connected(.failure(error))
            return
        case .success(let uniqueName):
            connected(.success(uniqueName))
        }
        let reason = serve()
        shutDown(reason: reason)
    }

    private func open(address: String) -> Result<String, DBusError> {
        _ = dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard !address.utf8.contains(0),
              let raw = address.withCString({ dbus_connection_open_private($0, &error) })
        else {
            return .failure(Self.takeError(&error, fallback: "cannot connect to the bus at \(address)"))
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        guard dbus_bus_register(raw, &error) != 0 else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            return .failure(Self.takeError(&error, fallback: "the bus at \(address) refused Hello"))
        }
        var fd: Int32 = -1
        guard dbus_connection_get_unix_fd(raw, &fd) != 0 else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            return .failure(DBusError(name: DBusError.failedName, message: "the bus connection has no socket"))
        }
        connection = raw
        socket = fd
        let uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        return .success(uniqueName)
    }

    private static func takeError(_ error: inout CDBus.DBusError, fallback: String) -> DBusError {
        guard dbus_error_is_set(&error) != 0 else {
            return DBusError(name: DBusError.failedName, message: fallback)
        }
        let name = error.name.map { String(cString: $0) } ?? DBusError.failedName
        let message = error.message.map { String(cString: $0) } ?? fallback
        return DBusError(name: name, message: message)
    }

    // MARK: - Submitting work

    /// Queues `command` for the loop thread, or fails it at once if the connection is closed.
    func submit(_ command: Command) {
        let rejection: DBusError? = inbox.withLock { inbox in
            if let reason = inbox.closedReason { return reason }
            inbox.commands.append(command)
            // A full pipe means a wake-up is already pending; nothing else can go wrong here.
            _ = try? SystemCall.writeByte(wakeWriter, 1)
            return nil
        }
        if let rejection { command.fail(rejection) }
    }

    // MARK: - The loop

    /// Serves the connection until it drops or a stop is requested; returns why it ended
    /// (nil: closed on request).
    ///
    /// A stream of signals (bluetoothd sends one per advertisement received) would wake the thread
    /// once per signal. So while no call waits for a reply, data that arrives is left in the
    /// kernel's buffer for `signalCoalescing` and then read, decoded and handed over in one batch;
    /// as long as each wait brings more, the loop reads on that beat, once per interval however
    /// many signals come. Commands still wake the loop at once, and replies to our calls are read
    /// as soon as they arrive.
    private func serve() -> DBusError? {
        var fds = [
            pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: 0, revents: 0),
        ]
        let coalescing = signalCoalescing > .zero
        var holdSocketUntil: ContinuousClock.Instant?
        while true {
            runCommands()
            if stopRequested { return nil }
            dispatchIncoming()
            if dbus_connection_get_is_connected(connection) == 0 {
                return DBusError.disconnected("the bus closed the connection")
            }
            if stopRequested { return nil }
            if !pending.isEmpty { holdSocketUntil = nil }
            var timeout = nextTimeoutMilliseconds()
            var events = Int16(POLLIN)
            if let until = holdSocketUntil {
                let remaining = Self.milliseconds(until: until)
                events = 0
                timeout = timeout < 0 ? remaining : min(timeout, remaining)
            }
            if dbus_connection_has_messages_to_send(connection) != 0 {
                events |= Int16(POLLOUT)
            }
            fds[0].revents = 0
            fds[1].events = events
            fds[1].revents = 0
            let ready = poll(&fds, events == 0 ? 1 : 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return DBusError(name: DBusError.failedName, message: "poll failed: \(String(cString: strerror(errno)))")
            }
            if fds[0].revents != 0 { drainWakePipe() }
            if let until = holdSocketUntil {
                if Self.milliseconds(until: until) == 0 {
                    // Hold on while the stream goes on; back to waiting on the socket once it stops.
                    holdSocketUntil = readWrite() ? .now + signalCoalescing : nil
                } else if fds[1].revents != 0 {
                    readWrite()  // Room to write.
                }
            } else if fds[1].revents == Int16(POLLIN), coalescing, pending.isEmpty {
                holdSocketUntil = .now + signalCoalescing
            } else if fds[1].revents != 0 {
                readWrite()
            }
            expireCalls()
        }
    }

    /// Writes what fits and reads what has arrived, without blocking; returns whether anything
    /// was there to read. libdbus reads at most 2 KB a call, so reading goes on while the socket
    /// holds more, up to 256 KB: a backlog is taken in one pass, not one wake-up per 2 KB.
    @discardableResult
    private func readWrite() -> Bool {
        var readSomething = false
        for _ in 0..<128 {
            var waiting: Int32 = 0
            let readable = ioctl(socket, UInt(FIONREAD), &waiting) == 0 && waiting > 0
            guard dbus_connection_read_write(connection, 0) != 0 else { return readSomething }
            readSomething = readSomething || readable
            guard readable else { return readSomething }
        }
        return readSomething
    }

    private func runCommands() {
        let commands = inbox.withLock { inbox -> [Command] in
            defer { inbox.commands.removeAll(keepingCapacity: true) }
            return inbox.commands
        }
        for command in commands { command.run(self) }
    }

    private func drainWakePipe() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            while let n = try? SystemCall.read(wakeReader, into: buffer.baseAddress!, count: buffer.count), n > 0 {}
        }
    }

    /// Until the earliest call deadline; -1 (forever) when no call waits.
    private func nextTimeoutMilliseconds() -> Int32 {
        guard !pending.isEmpty, let earliest = pending.values.map(\.deadline).min() else { return -1 }
        return Self.milliseconds(until: earliest)
    }

    /// Whole milliseconds until `instant`, rounded up so a wait never ends early; 0 once it passed.
    private static func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
        let remaining = ContinuousClock.now.duration(to: instant)
        if remaining <= .zero { return 0 }
        return Int32(clamping: remaining.wholeMilliseconds + 1)
    }

    private func expireCalls() {
        guard !pending.isEmpty else { return }
        let now = ContinuousClock.now
        for (serial, call) in pending where call.deadline <= now {
            pending[serial] = nil
            serialByToken[call.token] = nil
            call.continuation.resume(throwing: DBusError(
                name: DBusError.noReplyName, message: "no reply within the time limit"))
        }
    }

    /// Decodes everything that has arrived and routes it in order. Signals are handed to each
    /// subscriber as one batch per read, so a subscriber wakes once for a burst, not once per signal.
    private func dispatchIncoming() {
        var batches: [UInt64: [DBusMessage]] = [:]
        while let raw = dbus_connection_pop_message(connection) {
            defer { dbus_message_unref(raw) }
            let message: DBusMessage
            do {
                message = try MessageCodec.decode(raw, strings: &strings)
            } catch {
                undecodableMessages += 1
                answerUndecodable(raw, error: error)
                continue
            }
            if message.kind == .signal {
                collect(message, into: &batches)
            } else {
                route(message)
            }
        }
        for (id, batch) in batches { subscriptions[id]?.queue.deliver(batch) }
    }

    private func collect(_ signal: DBusMessage, into batches: inout [UInt64: [DBusMessage]]) {
        if signal.interface == "org.freedesktop.DBus.Local", signal.member == "Disconnected" { return }
        for (id, subscription) in subscriptions where subscription.rules.contains(where: { $0.matches(signal) }) {
            batches[id, default: []].append(signal)
        }
    }

    private func answerUndecodable(_ raw: OpaquePointer, error: any Error) {
        let serial = dbus_message_get_serial(raw)
        switch dbus_message_get_type(raw) {
        case 1 where dbus_message_get_no_reply(raw) == 0:
            var reply = DBusMessage(kind: .error)
            reply.errorName = DBusError.invalidArgumentsName
            reply.replySerial = serial
            reply.destination = dbus_message_get_sender(raw).map { String(cString: $0) }
            reply.body = [.string("cannot decode the call: \(error)")]
            _ = try? send(reply)
        case 2, 3:
            // A reply we cannot read still ends the call that waits for it.
            let replySerial = dbus_message_get_reply_serial(raw)
            if let call = pending.removeValue(forKey: replySerial) {
                serialByToken[call.token] = nil
                call.continuation.resume(throwing: DBusError.invalidArguments("cannot decode the reply: \(error)"))
            }
        default:
            break
        }
    }

    private func route(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            guard let replySerial = message.replySerial, let call = pending.removeValue(forKey: replySerial) else {
                return
            }
            serialByToken[call.token] = nil
            if message.kind == .error {
                let text = message.body.first?.stringValue ?? ""
                call.continuation.resume(throwing: DBusError(name: message.errorName ?? DBusError.failedName, message: text))
            } else {
                call.continuation.resume(returning: message)
            }
        case .signal:
            // Signals go through `collect(_:into:)`.
            break
        case .methodCall:
            guard let reply = ObjectDispatcher.reply(to: message, objects: objects), !message.noReplyExpected else {
                return
            }
            _ = try? send(reply)
        }
    }

    // MARK: - Operations (loop thread only)

    /// Sends a message; returns its serial.
    @discardableResult
    func send(_ message: DBusMessage) throws -> UInt32 {
        let raw = try MessageCodec.encode(message)
        defer { dbus_message_unref(raw) }
        var serial: UInt32 = 0
        guard dbus_connection_send(connection, raw, &serial) != 0 else {
            throw DBusError(name: DBusError.noMemoryName, message: "libdbus could not queue the message")
        }
        return serial
    }

    /// Sends copies of one message, marshalled once.
    func send(_ message: DBusMessage, copies: Int) throws {
        let raw = try MessageCodec.encode(message)
        defer { dbus_message_unref(raw) }
        for _ in 0..<max(0, copies) {
            guard let copy = dbus_message_copy(raw) else {
                throw DBusError(name: DBusError.noMemoryName, message: "libdbus could not copy the message")
            }
            defer { dbus_message_unref(copy) }
            guard dbus_connection_send(connection, copy, nil) != 0 else {
                throw DBusError(name: DBusError.noMemoryName, message: "libdbus could not queue the message")
            }
        }
    }

    func call(_ message: DBusMessage, token: UInt64, timeout: Duration,
              continuation: CheckedContinuation<DBusMessage, any Error>) {
        do {
            let serial = try send(message)
            pending[serial] = PendingCall(token: token, deadline: .now + timeout, continuation: continuation)
            serialByToken[token] = serial
        } catch {
            continuation.resume(throwing: error)
        }
    }

    func cancelCall(token: UInt64) {
        guard let serial = serialByToken.removeValue(forKey: token),
              let call = pending.removeValue(forKey: serial) else { return }
        call.continuation.resume(throwing: CancellationError())
    }

    func addSubscription(id: UInt64, _ subscription: Subscription) {
        subscriptions[id] = subscription
    }

    func removeSubscription(id: UInt64) -> Subscription? {
        subscriptions.removeValue(forKey: id)
    }

    func export(_ object: DBusExportedObject) {
        let isNew = objects[object.path] == nil
        objects[object.path] = object
        if isNew, let signal = ObjectDispatcher.interfacesAdded(object, objects: objects) { _ = try? send(signal) }
    }

    func unexport(_ path: DBusObjectPath) {
        guard let object = objects.removeValue(forKey: path) else { return }
        if let signal = ObjectDispatcher.interfacesRemoved(object, objects: objects) { _ = try? send(signal) }
    }

    func addCloseWaiter(_ waiter: CheckedContinuation<DBusError?, Never>) {
        closeWaiters.append(waiter)
    }

    /// Asks the loop to flush what it has queued and close.
    func requestStop() {
        closedByUser = true
        stopRequested = true
    }

    // MARK: - Shutting down

    private func shutDown(reason: DBusError?) {
        let failure = reason ?? DBusError.disconnected("the connection was closed")
        let leftovers = markClosed(failure)
        for command in leftovers { command.fail(failure) }
        if let connection {
            if reason == nil { dbus_connection_flush(connection) }
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            self.connection = nil
        }
        for call in pending.values { call.continuation.resume(throwing: failure) }
        pending.removeAll()
        serialByToken.removeAll()
        for subscription in subscriptions.values {
            subscription.queue.finish(throwing: reason == nil ? nil : failure)
        }
        subscriptions.removeAll()
        objects.removeAll()
        for waiter in closeWaiters { waiter.resume(returning: reason) }
        closeWaiters.removeAll()
    }

    /// Refuses further commands; returns those still queued.
    @discardableResult
    private func markClosed(_ reason: DBusError) -> [Command] {
        inbox.withLock { inbox in
            inbox.closedReason = reason
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }
    }

    var closedReason: DBusError? { inbox.withLock { $0.closedReason } }
}
