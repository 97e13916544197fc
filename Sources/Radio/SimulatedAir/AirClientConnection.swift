import Glibc
import NIOCore
import NIOPosix

/// One client connection to the hub, for the length of a closure: says hello as `device`, then
/// hands over what arrives as batches of messages. The socket is a `NIOAsyncChannel`, as the
/// hub's side and the agent's local API are.
struct AirClientConnection: Sendable {
    let path: String
    /// Batches in arrival order; ends when the hub closes the connection, or throws an
    /// ``AirWireError`` on bytes that break the protocol. A consumer that falls behind stops
    /// the reads, and the hub then drops the frames it cannot write, as a radio too busy to
    /// listen would miss them.
    let batches: NIOAsyncChannelInboundStream<[AirMessage]>
    private let channel: any Channel

    /// Connects to the hub at `path` and runs `body` on the connection, which closes when `body`
    /// returns. Throws ``SocketError`` when the hub is not there.
    /// - Parameter readBeat: hand what was read to the consumer at most once per beat (see
    ///   ``AirMessageBatcher``).
    static func connect<T: Sendable>(path: String, device: String, readBeat: Duration = .zero,
                                     _ body: (AirClientConnection) async throws -> T) async throws -> T {
        let socket = try UnixSocket.connect(path: path)
        return try await run(socket: socket, path: path, device: device, readBeat: readBeat, body)
    }

    /// Takes over `socket`, a Unix stream socket connected to the hub at `path`, says hello and
    /// runs `body` on the connection; the socket is closed when `body` returns.
    static func run<T: Sendable>(socket: Int32, path: String, device: String, readBeat: Duration = .zero,
                                 _ body: (AirClientConnection) async throws -> T) async throws -> T {
        // If NIO cannot take the socket, it has closed it or never registered it: a descriptor
        // leaked on that rare path is safer than one closed twice.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .withConnectedSocket(NIOBSDSocket.Handle(socket)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AirMessageBatcher(readBeat: readBeat))
                    return try NIOAsyncChannel<[AirMessage], ByteBuffer>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(backPressureStrategy: .init(lowWatermark: 16, highWatermark: 64)))
                }
            }
        return try await channel.executeThenClose { inbound, _ in
            let connection = AirClientConnection(path: path, batches: inbound, channel: channel.channel)
            try connection.send(.hello(version: AirMessage.version, device: device))
            return try await body(connection)
        }
    }

    /// Hands `message` to the connection without waiting: a client sends a few small messages
    /// (hello, scan, advertise, rotate, withdraw), some from inside a lock, so each payload goes
    /// to each connection exactly once. Throws when the connection is already closed; a write
    /// that fails later shows as the end of ``batches``.
    func send(_ message: AirMessage) throws(SocketError) {
        guard channel.isActive else { throw SocketError("write to", path: path, code: EPIPE) }
        var bytes: [UInt8] = []
        message.encode(into: &bytes)
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// Closes the connection; ``batches`` ends.
    func close() {
        channel.close(promise: nil)
    }
}

/// Decodes the air's frames from a byte stream and passes them on as batches, one per read or,
/// with a read beat, at most one per beat.
///
/// The hub writes a scanner's frames every 10 ms, so a busy air is about 100 batches a second;
/// with a beat, a scanner in a busy room wakes its tasks a few times a tenth of a second instead
/// (frames carry their own times, so ranging is unchanged; see the README's agent figures).
/// Lives on the channel's event loop, so it needs no lock.
final class AirMessageBatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = [AirMessage]

    private let beat: TimeAmount
    private var decoder = AirFrameDecoder()
    /// What was read but not yet handed over, while hand-overs are paced.
    private var pending: [AirMessage] = []
    private var handOverScheduled = false
    private var lastHandOver = NIODeadline.uptimeNanoseconds(0)
    private var failed = false
    private var inactive = false

    init(readBeat: Duration = .zero) {
        let (seconds, attoseconds) = readBeat.components
        beat = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { decoder.append($0) }
        do {
            while let message = try decoder.next() { pending.append(message) }
        } catch {
            failed = true
            handOver(context)
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        if beat == .zero || NIODeadline.now() >= lastHandOver + beat {
            handOver(context)
        } else if !handOverScheduled, !pending.isEmpty {
            // The consumer is woken at most once a beat; what comes in between waits here.
            handOverScheduled = true
            context.eventLoop.assumeIsolated().scheduleTask(deadline: lastHandOver + beat) { [self] in
                guard !inactive else { return }
                handOver(context)
                // Outside a read, the batch goes on only with a read-complete of its own
                // (NIOAsyncChannel passes reads to its consumer at read-complete).
                context.fireChannelReadComplete()
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        handOver(context)
        inactive = true
        context.fireChannelReadComplete()
        context.fireChannelInactive()
    }

    private func handOver(_ context: ChannelHandlerContext) {
        handOverScheduled = false
        lastHandOver = .now()
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = []
        context.fireChannelRead(wrapInboundOut(batch))
    }
}
