import BeaconFrames
import Foundation
import Glibc
import NIOCore
import NIOEmbedded
@testable import Radio
import Testing

/// The HCI link on NIO keeps one HCI packet per read and per write, as a kernel HCI socket needs.
@Suite struct HCILinkTests {
    /// Three events the controller sends back to back, before the link reads any: a stream read
    /// would have joined them; each must arrive whole and alone.
    @Test func eventsSentBackToBackArriveOnePacketEach() async throws {
        let (host, device) = try Self.seqpacketPair()
        defer { close(device) }
        // LE Meta (0x3E) events of 3, 40 and 255 parameter bytes.
        let packets: [[UInt8]] = [3, 40, 255].map { length in [0x04, 0x3E, UInt8(length)] + (0..<length).map { UInt8(truncatingIfNeeded: $0) } }
        for packet in packets { #expect(send(device, packet, packet.count, 0) == packet.count) }
        let link = try await HCILink.open(fd: host, name: "pair")
        defer { link.close() }
        var received: [[UInt8]] = []
        for await batch in link.events {
            received += batch.packets
            if received.count >= packets.count { break }
        }
        #expect(received == packets)
    }

    /// Commands executed at once reach the controller as separate packets, each answered.
    @Test func commandsExecutedTogetherLeaveAsSeparatePackets() async throws {
        let (host, device) = try Self.seqpacketPair()
        defer { close(device) }
        let link = try await HCILink.open(fd: host, name: "pair")
        defer { link.close() }
        let commands: [HCICommand] = [.leSetScanEnable(false, filterDuplicates: false), .leSetRandomAddress(BluetoothAddress(0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01)),
                                      .leSetScanParameters(active: false, interval: .milliseconds(100), window: .milliseconds(100))]
        // The controller's side blocks in recv, so it runs on a thread of its own, not on the
        // cooperative pool the link's tasks need.
        let controller = Task { try await Self.onOwnThread { try Self.answer(commands.count, on: device) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for command in commands { group.addTask { try await link.execute(command, timeout: .seconds(30)) } }
            try await group.waitForAll()
        }
        let seen = try await controller.value
        #expect(seen.count == commands.count)
        #expect(Set(seen) == Set(commands.map(\.packet)))
    }

    /// Reads `count` packets from the controller's end, answering each with Command Complete.
    static func answer(_ count: Int, on device: Int32) throws -> [[UInt8]] {
        var seen: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while seen.count < count {
            let received = recv(device, &buffer, buffer.count, 0)
            guard received > 0 else { throw ControllerSideFailed(call: "recv", code: errno) }
            let packet = Array(buffer[..<received])
            seen.append(packet)
            // Command Complete: 1 credit, the opcode, status 0.
            let complete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, packet[1], packet[2], 0x00]
            guard send(device, complete, complete.count, 0) == complete.count else { throw ControllerSideFailed(call: "send", code: errno) }
        }
        return seen
    }

    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// While one write is on its way, the next waits in the handler, so NIO never gathers two.
    @Test func onePacketPerWriteHoldsTheNextUntilThePreviousIsDone() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handlers: [held, OnePacketPerWrite()])
        let first = channel.write(ByteBuffer(bytes: [1, 1]))
        let second = channel.write(ByteBuffer(bytes: [2, 2]))
        channel.flush()
        #expect(held.writes.map(\.packet) == [[1, 1]])
        held.writes[0].promise?.succeed()
        #expect(try first.wait() == ())
        #expect(held.writes.map(\.packet) == [[1, 1], [2, 2]])
        held.writes[1].promise?.succeed()
        #expect(try second.wait() == ())
        _ = try? channel.finish()
    }

    static func seqpacketPair() throws -> (Int32, Int32) {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        return (pair[0], pair[1])
    }
}

/// A call on the controller's end of the pair failed.
private struct ControllerSideFailed: Error {
    let call: String
    let code: Int32
}

/// Keeps every write it is given, with its promise, until the test completes it.
private final class HeldWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var writes: [(packet: [UInt8], promise: EventLoopPromise<Void>?)] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        writes.append((Array(unwrapOutboundIn(data).readableBytesView), promise))
    }

    func flush(context: ChannelHandlerContext) {}
}
