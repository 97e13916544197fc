import BeaconFrames
import Foundation
@testable import Radio
import Testing

/// ``SimulatedAirAdvertiser/advertise(rotating:)`` against a live hub: one connection, a new
/// address from the hub with each payload, both switched between two transmissions.
@Suite(.timeLimit(.minutes(5))) struct RotatingAirAdvertiserTests {
    static let alice = SimulatedAir.address(of: "alice")

    static func minor(_ advertisement: Advertisement) -> UInt16? {
        guard case .iBeacon(_, _, let minor)? = Sighting(advertisement)?.identity else { return nil }
        return minor
    }

    /// The first advertisement after the first `count` that satisfies `predicate`, waiting up to 30 s.
    static func heard(after count: Int, by probe: AirProbe, where predicate: (Advertisement) -> Bool) async -> Advertisement? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let match = probe.all.dropFirst(count).first(where: predicate) { return match }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test func eachPayloadGoesOutFromANewAddressAndOnlyFromIt() async throws {
        let (running, clock) = try SimulatedAirHubTests.manualHub(SimulatedAirHubTests.scenario(sigma: 0))
        let probe = AirProbe(SimulatedAirScanner(socketPath: running.socketPath, device: "bob"))
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let advertiser = SimulatedAirAdvertiser(socketPath: running.socketPath, device: "alice")
        let task = Task { try await advertiser.advertise(rotating: payloads) }
        #expect(await running.waitFor(scanning: 1))
        for minor in UInt16(1)...3 {
            next.yield(Fixtures.payload(minor: minor))
            let deadline = ContinuousClock.now + .seconds(20)
            while running.hub.census.rotations < Int(minor), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(running.hub.census.rotations == Int(minor))
            await clock.run(for: .seconds(2), step: .milliseconds(100))
            #expect(await probe.first { Self.minor($0) == minor } != nil, "minor \(minor) heard")
        }
        // Frames still on their way through the socket.
        try await Task.sleep(for: .milliseconds(200))
        let heard = probe.all.filter { Self.minor($0) != nil }
        let byAddress = Dictionary(grouping: heard, by: \.address).mapValues { Set($0.compactMap(Self.minor)) }
        #expect(byAddress.count == 3, "three addresses: \(byAddress)")
        #expect(byAddress.values.allSatisfy { $0.count == 1 }, "one identity per address: \(byAddress)")
        #expect(Set(byAddress.values.map { $0.first! }) == [1, 2, 3])
        #expect(byAddress.keys.allSatisfy { $0.randomKind == .nonResolvablePrivate && $0 != Self.alice })
        // In time order the identities go 1, 2, 3 and never back.
        let minors = heard.compactMap(Self.minor)
        #expect(minors == minors.sorted())
        #expect(running.hub.census.advertising == 1, "one connection, one transmitter")
        task.cancel()
        try await task.value
        await probe.stop()
        await running.stop()
    }

    /// After the hub restarts, the current payload is on the air again, from yet another address,
    /// and the next payload still rotates.
    @Test func keepsItsPayloadWhenTheHubRestarts() async throws {
        let path = temporarySocketPath()
        let scenario = SimulatedAirHubTests.scenario()
        var running = RunningHub(try SimulatedAirHub(scenario: scenario, socketPath: path, speed: 5))
        let probe = AirProbe(SimulatedAirScanner(socketPath: path, device: "bob"))
        let (payloads, next) = AsyncStream<AdvertisingPayload>.makeStream()
        let task = Task { try await SimulatedAirAdvertiser(socketPath: path, device: "alice").advertise(rotating: payloads) }
        next.yield(Fixtures.payload(minor: 7))
        let first = try #require(await probe.first { Self.minor($0) == 7 })
        await running.stop()
        // What the first hub sent may still be on its way: count once nothing more comes.
        var count = -1
        while probe.all.count != count {
            count = probe.all.count
            try await Task.sleep(for: .milliseconds(300))
        }
        running = RunningHub(try SimulatedAirHub(scenario: scenario, socketPath: path, speed: 5))
        let again = try #require(await Self.heard(after: count, by: probe) { Self.minor($0) == 7 })
        #expect(again.address != first.address, "a new hub, a new address")
        next.yield(Fixtures.payload(minor: 8))
        let rotated = try #require(await Self.heard(after: count, by: probe) { Self.minor($0) == 8 })
        #expect(rotated.address != again.address && rotated.address != first.address)
        let afterRestart = probe.all.dropFirst(count)
        #expect(!afterRestart.contains { Self.minor($0) == 7 && $0.address != again.address })
        #expect(!afterRestart.contains { Self.minor($0) == 8 && $0.address != rotated.address })
        task.cancel()
        try await task.value
        await probe.stop()
        await running.stop()
    }

    /// A client of the protocol before rotation (version 1) is refused with a sentence rather
    /// than dropped at its first rotate.
    @Test func refusesAClientOfAnotherProtocolVersionWithASentence() async throws {
        let (running, _) = try SimulatedAirHubTests.manualHub(SimulatedAirHubTests.scenario())
        let fd = try UnixSocket.connect(path: running.socketPath, blocking: true)
        defer { close(fd) }
        var hello: [UInt8] = []
        AirMessage.hello(version: 1, device: "alice").encode(into: &hello)
        try UnixSocket.writeAll(fd, hello, path: running.socketPath)
        // The blocking reads run on a thread of their own: the hub answers from the cooperative
        // pool, which a test blocked in recv on two cores would leave without a thread.
        let refusal: String? = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    var decoder = AirFrameDecoder()
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    var refusal: String?
                    while refusal == nil {
                        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        guard count > 0 else { break }
                        decoder.append(Array(buffer[..<count]))
                        while let message = try decoder.next() {
                            if case .refused(let text) = message { refusal = text }
                        }
                    }
                    return refusal
                })
            }
        }
        #expect(refusal?.contains("speaks protocol 2 and the client 1") == true, "\(refusal ?? "no refusal")")
        #expect(refusal?.contains("same nearplay build") == true)
        await running.stop()
    }
}
