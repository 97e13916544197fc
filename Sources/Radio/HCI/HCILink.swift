import BeaconFrames
import Glibc
import NIOCore
import NIOPosix
import Synchronization

/// Why a command on an ``HCILink`` did not succeed.
enum HCILinkError: Error, Sendable {
    /// The controller answered with an error status.
    case refused(HCIOpcode, HCIStatus)
    /// No Command Complete or Command Status within the timeout.
    case timedOut(HCIOpcode, Duration)
    /// The descriptor was closed or failed (the controller went away); errno when a call failed.
    case gone(errno: Int32?)
}

/// One open HCI descriptor: writes commands and waits for their Command Complete or Command
/// Status with a timeout, and hands every other event packet to ``events``.
///
/// The descriptor is a `NIOAsyncChannel` (NIO's pipe channel, which reads and writes any
/// descriptor epoll can watch), as the simulated air's and the local API's sockets are. HCI
/// sockets (and the `SOCK_SEQPACKET` socketpairs of the tests' fake controller) keep packet
/// boundaries, and the channel keeps them too: every read is one packet, starting with the H4
/// packet-type byte, into a fixed 1 KiB buffer (an HCI event is at most 258 bytes; NIO's adaptive
/// buffer could shrink below that); ``OnePacketPerWrite`` lets one command at a time reach the
/// descriptor, so NIO never gathers two into one `writev`, which such a socket would take as one
/// packet.
final class HCILink: Sendable {
    let name: String
    /// Event packets that are not answers to our commands, in arrival order, with the time they
    /// were read; ends when the controller goes away (``closedBy`` says why) or ``close()`` is called.
    let events: AsyncStream<Batch>

    struct Batch: Sendable {
        var time: ContinuousClock.Instant
        var packets: [[UInt8]]
    }

    private struct Waiter {
        var id: UInt64
        var opcode: HCIOpcode
        var continuation: CheckedContinuation<HCICommandResult, any Error>
    }

    private struct State {
        var open = true
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var closedBy: HCILinkError?
    }

    private let state = Mutex(State())
    private let channel: any Channel
    private let eventLoop: any EventLoop

    /// Takes over `fd`, an open HCI descriptor (NIO closes it with the link), and reads it until
    /// ``close()`` or the controller goes away. Throws ``RadioError`` when NIO cannot watch it.
    static func open(fd: Int32, name: String) async throws(RadioError) -> HCILink {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1024))
                .takingOwnershipOfDescriptor(inputOutput: fd) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(OnePacketPerWrite())
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            // NIO has closed `fd` when the failure came after it made the channel, and not when
            // before: a descriptor leaked on that rare path is safer than one closed twice.
            throw RadioError(.adapterUnusable, "Cannot read Bluetooth controller \(name) (\(error)); check that it is an HCI device, and try --backend bluez.")
        }
        let (events, continuation) = AsyncStream<Batch>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let link = HCILink(name: name, channel: channel.channel, events: events)
        // The reading task lives as long as the channel: it ends when the channel closes, by
        // close() or because the controller went away.
        Task(priority: .high) { await link.read(channel, into: continuation) }
        return link
    }

    private init(name: String, channel: any Channel, events: AsyncStream<Batch>) {
        self.name = name
        self.channel = channel
        self.eventLoop = channel.eventLoop
        self.events = events
    }

    /// Hands each packet to the command waiting for it, or else to ``events``; when the channel
    /// ends, fails the commands still waiting.
    private func read(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
                      into continuation: AsyncStream<Batch>.Continuation) async {
        var ended: HCILinkError?
        do {
            try await channel.executeThenClose { inbound, _ in
                for try await buffer in inbound {
                    let packet = Array(buffer.readableBytesView)
                    if let result = try? HCIEvent.commandResult(packet), let waiter = take(opcode: result.opcode) {
                        waiter.continuation.resume(returning: result)
                    } else {
                        continuation.yield(Batch(time: .now, packets: [packet]))
                    }
                }
            }
            ended = .gone(errno: nil)
        } catch let error as IOError {
            ended = .gone(errno: error.errnoCode)
        } catch {
            ended = .gone(errno: nil)
        }
        let waiters = state.withLock { state in
            state.open = false
            if state.closedBy == nil { state.closedBy = ended }
            defer { state.waiters = [] }
            return state.waiters
        }
        let reason = closedBy ?? .gone(errno: nil)
        for waiter in waiters { waiter.continuation.resume(throwing: reason) }
        continuation.finish()
    }

    /// Why the link ended, once it has.
    var closedBy: HCILinkError? { state.withLock { $0.closedBy } }

    /// Closes the descriptor; ``events`` ends and pending commands fail.
    func close() {
        channel.close(promise: nil)
    }

    /// Sends `command` and waits up to `timeout` for its Command Complete or Command Status.
    /// Throws ``HCILinkError`` on an error status, a timeout or a lost controller, and
    /// `CancellationError` when the task is cancelled meanwhile.
    @discardableResult
    func execute(_ command: HCICommand, timeout: Duration) async throws -> HCICommandResult {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HCICommandResult, any Error>) in
                let registered = state.withLock { state in
                    guard state.open, !Task.isCancelled else { return false }
                    state.waiters.append(Waiter(id: id, opcode: command.opcode, continuation: continuation))
                    return true
                }
                guard registered else {
                    continuation.resume(throwing: Task.isCancelled ? CancellationError() : closedBy ?? .gone(errno: nil))
                    return
                }
                // The waiter is in place before the command goes out, so no answer can come first.
                channel.writeAndFlush(ByteBuffer(bytes: command.packet)).whenFailure { [self] error in
                    if let waiter = take(id: id) { waiter.continuation.resume(throwing: HCILinkError.gone(errno: (error as? IOError)?.errnoCode)) }
                }
                let (seconds, attoseconds) = max(.zero, timeout).components
                eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) { [weak self] in
                    if let waiter = self?.take(id: id) { waiter.continuation.resume(throwing: HCILinkError.timedOut(command.opcode, timeout)) }
                }
            }
        } onCancel: {
            if let waiter = take(id: id) { waiter.continuation.resume(throwing: CancellationError()) }
        }
        guard result.status == HCIStatus.success else { throw HCILinkError.refused(command.opcode, result.status) }
        return result
    }

    private func take(id: UInt64) -> Waiter? {
        state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
    }

    private func take(opcode: HCIOpcode) -> Waiter? {
        state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.opcode == opcode }) else { return nil }
            return state.waiters.remove(at: index)
        }
    }
}

/// Lets one write at a time through to the channel: the next goes once the previous is done.
///
/// NIO gathers the writes pending on a channel into one `writev`; on a descriptor that keeps
/// packet boundaries (an HCI socket, a `SOCK_SEQPACKET` socketpair) that would send two commands
/// as one packet. Holding the others here keeps one packet per write.
final class OnePacketPerWrite: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var waiting: [(packet: NIOAny, promise: EventLoopPromise<Void>?)] = []
    private var flushedCount = 0
    private var inFlight = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        waiting.append((data, promise))
    }

    func flush(context: ChannelHandlerContext) {
        flushedCount = waiting.count
        sendNext(context)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all {
            let dropped = waiting
            waiting = []
            flushedCount = 0
            for write in dropped { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        }
        context.close(mode: mode, promise: promise)
    }

    /// Writes still held when the channel goes fail, as NIO's own pending writes do.
    func handlerRemoved(context: ChannelHandlerContext) {
        let dropped = waiting
        waiting = []
        flushedCount = 0
        for write in dropped { write.promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    private func sendNext(_ context: ChannelHandlerContext) {
        guard !inFlight, flushedCount > 0 else { return }
        let (packet, promise) = waiting.removeFirst()
        flushedCount -= 1
        inFlight = true
        let done = context.eventLoop.makePromise(of: Void.self)
        done.futureResult.assumeIsolated().whenComplete { [self] result in
            inFlight = false
            promise?.completeWith(result)
            sendNext(context)
        }
        context.writeAndFlush(packet, promise: done)
    }
}
