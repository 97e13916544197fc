import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A raw TCP connection to a live lobby, for the attacker suite: it writes bytes exactly as given
/// (half a request, one byte at a time, garbage) and records what comes back until the lobby
/// closes it.
final class RawConnection: Sendable {
    private let channel: any Channel
    private let box = Box()

    /// What the lobby sent and whether it closed, shared with the channel's handler.
    final class Box: Sendable {
        private let state = Mutex<(received: [UInt8], closed: Bool)>(([], false))
        func append(_ bytes: [UInt8]) { state.withLock { $0.received += bytes } }
        func close() { state.withLock { $0.closed = true } }
        var snapshot: (text: String, closed: Bool) {
            state.withLock { (String(decoding: $0.received, as: UTF8.self), $0.closed) }
        }
    }

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, as a second client
    /// would) when given.
    init(port: Int, from source: String? = nil) async throws {
        let box = box
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(box: box))
                }
            }
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
    }

    /// Writes `text` (UTF-8) at once.
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// Writes `text` one byte at a time, `interval` apart; stops quietly if the lobby closes.
    func trickle(_ text: String, every interval: Duration) async {
        for byte in text.utf8 {
            guard channel.isActive, !Task.isCancelled else { return }
            try? await channel.writeAndFlush(ByteBuffer(bytes: [byte]))
            try? await Task.sleep(for: interval)
        }
    }

    /// What the lobby sent so far.
    var received: String { box.snapshot.text }

    /// Everything the lobby sent, once it closed the connection; nil if it is still open after `timeout`.
    func closed(within timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let snapshot = box.snapshot
            if snapshot.closed { return snapshot.text }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Whether the lobby still holds the connection open.
    var isOpen: Bool { !box.snapshot.closed }

    func close() async {
        try? await channel.close()
    }

    deinit { channel.close(promise: nil) }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let box: Box

        init(box: Box) { self.box = box }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            box.append(Array(bytes.readableBytesView))
        }

        func channelInactive(context: ChannelHandlerContext) {
            box.close()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

extension String {
    /// The status code of the HTTP response this text starts with.
    var httpStatus: Int? {
        guard hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(dropFirst(9).prefix(3))
    }
}
