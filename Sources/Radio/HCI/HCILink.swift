import BeaconFrames
import Dispatch
import Glibc
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
/// Status with a timeout, and hands every other event packet to ``events``, a batch per wake-up.
///
/// Reads happen on a dispatch read source, so an idle controller costs no CPU. Each read is one
/// packet (HCI sockets and `SOCK_SEQPACKET` socketpairs keep packet boundaries), starting with
/// the H4 packet-type byte.
final class HCILink: @unchecked Sendable {
    // @unchecked: `buffer` is touched only on the source's serial queue; `state` is a Mutex; the
    // descriptor is closed by the source's cancel handler, under `state`'s lock.
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
        var fd: Int32?
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var closedBy: HCILinkError?
    }

    /// The state, shared with the read source's handlers.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    private let shared: Shared
    private let source: any DispatchSourceRead
    private let queue: DispatchQueue

    /// The read buffer, touched only on the source's queue; freed with the event handler.
    private final class ReadBuffer: @unchecked Sendable {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 8)
        deinit { bytes.deallocate() }
    }

    init(fd: Int32, name: String) {
        self.name = name
        let shared = Shared(State(fd: fd))
        self.shared = shared
        // Above default QoS: the controller's answers and events are read here, and a process
        // whose default-QoS threads are all busy (hashing, say) must still hear its controller.
        let queue = DispatchQueue(label: "nearplay.radio.hci.\(name)", qos: .userInitiated)
        self.queue = queue
        let (events, continuation) = AsyncStream<Batch>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        self.events = events
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        self.source = source
        let readBuffer = ReadBuffer()
        source.setEventHandler {
            let buffer = readBuffer.bytes
            var packets: [[UInt8]] = []
            var ended: HCILinkError?
            while true {
                let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
                if n > 0 {
                    packets.append(Array(UnsafeRawBufferPointer(rebasing: buffer[..<n])))
                    continue
                }
                if n == 0 {
                    ended = .gone(errno: nil)
                } else if errno == EINTR {
                    continue
                } else if errno != EAGAIN {
                    ended = .gone(errno: errno)
                }
                break
            }
            var others: [[UInt8]] = []
            for packet in packets {
                guard let result = try? HCIEvent.commandResult(packet) else {
                    others.append(packet)
                    continue
                }
                let waiter: Waiter? = shared.state.withLock { state in
                    guard let index = state.waiters.firstIndex(where: { $0.opcode == result.opcode }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                if let waiter { waiter.continuation.resume(returning: result) } else { others.append(packet) }
            }
            if !others.isEmpty { continuation.yield(Batch(time: .now, packets: others)) }
            if let ended {
                shared.state.withLock { if $0.closedBy == nil { $0.closedBy = ended } }
                source.cancel()
            }
        }
        source.setCancelHandler {
            let waiters = shared.state.withLock { state -> [Waiter] in
                if let open = state.fd { Glibc.close(open) }
                state.fd = nil
                if state.closedBy == nil { state.closedBy = .gone(errno: nil) }
                defer { state.waiters = [] }
                return state.waiters
            }
            let reason = shared.state.withLock { $0.closedBy! }
            for waiter in waiters { waiter.continuation.resume(throwing: reason) }
            continuation.finish()
        }
        source.resume()
    }

    deinit { source.cancel() }

    /// Why the link ended, once it has.
    var closedBy: HCILinkError? { shared.state.withLock { $0.closedBy } }

    /// Closes the descriptor; ``events`` ends and pending commands fail.
    func close() { source.cancel() }

    /// Sends `command` and waits up to `timeout` for its Command Complete or Command Status.
    /// Throws ``HCILinkError`` on an error status, a timeout or a lost controller, and
    /// `CancellationError` when the task is cancelled meanwhile.
    @discardableResult
    func execute(_ command: HCICommand, timeout: Duration) async throws -> HCICommandResult {
        let id = shared.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HCICommandResult, any Error>) in
                // Written under the lock: the cancel handler closes the descriptor under it too,
                // so a command never goes to a number that by then names another descriptor.
                let packet = command.packet
                let written: Int? = shared.state.withLock { state in
                    guard let fd = state.fd, !Task.isCancelled else { return nil }
                    state.waiters.append(Waiter(id: id, opcode: command.opcode, continuation: continuation))
                    return packet.withUnsafeBytes { bytes in
                        var n: Int
                        repeat { n = Glibc.write(fd, bytes.baseAddress, bytes.count) } while n < 0 && errno == EINTR
                        return n < 0 ? -Int(errno) : n
                    }
                }
                guard let written else {
                    continuation.resume(throwing: Task.isCancelled ? CancellationError() : closedBy ?? .gone(errno: nil))
                    return
                }
                if written < 0 {
                    if let waiter = take(id) { waiter.continuation.resume(throwing: HCILinkError.gone(errno: -Int32(written))) }
                    return
                }
                let nanoseconds = UInt64(max(0, timeout.inSeconds) * 1e9)
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))) { [weak self] in
                    if let waiter = self?.take(id) { waiter.continuation.resume(throwing: HCILinkError.timedOut(command.opcode, timeout)) }
                }
            }
        } onCancel: {
            if let waiter = take(id) { waiter.continuation.resume(throwing: CancellationError()) }
        }
        guard result.status == HCIStatus.success else { throw HCILinkError.refused(command.opcode, result.status) }
        return result
    }

    private func take(_ id: UInt64) -> Waiter? {
        shared.state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
    }
}
