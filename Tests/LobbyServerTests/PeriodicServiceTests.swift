import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
@testable import Lobby
@testable import LobbyServer

/// The loop behind the tournament scheduler and the expiry sweeper.
@Suite struct PeriodicServiceTests {
    /// A failed pass is logged and the next one still runs; cancelling the service in the long
    /// sleep between passes ends it at once instead of starting another pass.
    @Test(.timeLimit(.minutes(1))) func keepsGoingAfterAFailureAndEndsWhenItsSleepIsCancelled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("periodic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try LobbyStore(path: folder.appendingPathComponent("lobby.sqlite").path,
                                   configuration: LobbyConfiguration(enabledMinigames: ["statue"], bcryptCost: 4))
        struct Failed: Error {}
        let passes = Atomic<Int>(0)
        let service = PeriodicService(store: store, lease: "test", interval: .milliseconds(10), logger: Logger(label: "test"),
                                      failure: "The test pass failed") {
            if passes.add(1, ordering: .relaxed).newValue == 1 { throw Failed() }
        }
        let fast = Task { try await service.run() }
        while passes.load(ordering: .relaxed) < 3 { try await Task.sleep(for: .milliseconds(5)) }
        fast.cancel()
        try await fast.value

        let once = Atomic<Int>(0)
        let slow = PeriodicService(store: store, lease: "test", interval: .seconds(3600), logger: Logger(label: "test"),
                                   failure: "The test pass failed") { once.add(1, ordering: .relaxed) }
        let started = ContinuousClock.now
        let running = Task { try await slow.run() }
        while once.load(ordering: .relaxed) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        running.cancel()
        try await running.value
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(once.load(ordering: .relaxed) == 1)
    }
}
