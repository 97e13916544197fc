import Dispatch
import Glibc
import Synchronization

/// One client connection to the hub: says hello as `device`, then hands over what arrives as
/// batches of messages, one batch per readable event (the hub writes a scanner's frames every
/// 10 ms, so a busy air is about 100 batches a second, not one wake-up per frame).
final class AirClientConnection: @unchecked Sendable {
    // @unchecked: the source is only cancelled (thread-safe) and `reader` is touched only on the
    // source's serial queue. The descriptor is closed by the source's cancel handler, under
    // `descriptor`'s lock, so a send never writes to a closed (or reused) descriptor.
    let path: String
    private let descriptor: Descriptor
    private let source: any DispatchSourceRead
    private let reader: Reader
    /// Batches in arrival order; ends when the hub closes the connection, or throws an
    /// ``AirWireError`` on bytes that break the protocol.
    let batches: AsyncThrowingStream<[AirMessage], any Error>

    /// The socket while open; nil once the cancel handler has closed it.
    private final class Descriptor: Sendable {
        let fd: Mutex<Int32?>
        init(_ fd: Int32) { self.fd = Mutex(fd) }
    }

    /// Touched only on the read source's serial queue.
    private final class Reader: @unchecked Sendable {
        var decoder = AirFrameDecoder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        /// What was read but not yet handed over, when hand-overs are paced (see `readBeat`).
        var pending: [AirMessage] = []
        var flushScheduled = false
        var lastHandOver: UInt64 = 0
        deinit { buffer.deallocate() }

        func handOver(to continuation: AsyncThrowingStream<[AirMessage], any Error>.Continuation) {
            flushScheduled = false
            lastHandOver = DispatchTime.now().uptimeNanoseconds
            if !pending.isEmpty {
                continuation.yield(pending)
                pending = []
            }
        }
    }

    /// Connects and says hello. Throws ``SocketError`` when the hub is not there.
    /// - Parameter readBeat: hand what was read to the consumer at most once per beat. A scanner
    ///   in a busy room then wakes its tasks a few times a tenth of a second instead of at each of
    ///   the hub's 10 ms batches (frames carry their own times, so ranging is unchanged; see the
    ///   README's agent figures).
    init(path: String, device: String, readBeat: Duration = .zero) throws(SocketError) {
        self.path = path
        let fd = try UnixSocket.connect(path: path)
        let descriptor = Descriptor(fd)
        self.descriptor = descriptor
        let reader = Reader()
        self.reader = reader
        // About 40 s of a busy air's batches; a consumer that falls further behind loses the
        // oldest, as a radio too busy to listen would.
        let (batches, continuation) = AsyncThrowingStream<[AirMessage], any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(4096))
        self.batches = batches
        let queue = DispatchQueue(label: "nearplay.air.client")
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        self.source = source
        let beatNanoseconds = Int(readBeat.components.seconds) * 1_000_000_000 + Int(readBeat.components.attoseconds / 1_000_000_000)
        source.setEventHandler {
            var ended = false
            do {
                while true {
                    guard let count = try UnixSocket.read(fd, into: reader.buffer, path: path) else { break }
                    if count == 0 {
                        ended = true
                        break
                    }
                    reader.decoder.append(UnsafeRawBufferPointer(rebasing: reader.buffer[..<count]))
                    if count < reader.buffer.count { break }
                }
                while let message = try reader.decoder.next() { reader.pending.append(message) }
            } catch {
                reader.handOver(to: continuation)
                continuation.finish(throwing: error)
                source.cancel()
                return
            }
            if ended {
                reader.handOver(to: continuation)
                continuation.finish()
                source.cancel()
            } else if beatNanoseconds == 0 || DispatchTime.now().uptimeNanoseconds >= reader.lastHandOver + UInt64(beatNanoseconds) {
                reader.handOver(to: continuation)
            } else if !reader.flushScheduled, !reader.pending.isEmpty {
                // The consumer is woken at most once a beat; what comes in between waits here.
                reader.flushScheduled = true
                queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: reader.lastHandOver + UInt64(beatNanoseconds))) {
                    reader.handOver(to: continuation)
                }
            }
        }
        source.setCancelHandler {
            continuation.finish()
            descriptor.fd.withLock { fd in
                if let open = fd { Glibc.close(open) }
                fd = nil
            }
        }
        source.resume()
        do {
            try send(.hello(version: AirMessage.version, device: device))
        } catch {
            source.cancel()
            throw error
        }
    }

    deinit { source.cancel() }

    func send(_ message: AirMessage) throws(SocketError) {
        var bytes: [UInt8] = []
        message.encode(into: &bytes)
        try descriptor.fd.withLock { fd throws(SocketError) in
            guard let open = fd else { throw SocketError("write to", path: path, code: EPIPE) }
            try UnixSocket.writeAll(open, bytes, path: path)
        }
    }

    /// Closes the connection; the stream of batches ends.
    func close() {
        source.cancel()
    }
}
