import BeaconFrames
import Foundation
@testable import Radio
import Synchronization

/// A fresh folder for one test's socket, short enough for `sun_path`.
func temporarySocketPath() -> String {
    let folder = "/tmp/npair-\(UUID().uuidString.prefix(8))"
    return folder + "/air.sock"
}

/// Runs a hub in a task of its own; `stop()` cancels it and waits until it has closed everything.
final class RunningHub<C: Clock>: Sendable where C.Duration == Duration {
    let hub: SimulatedAirHub<C>
    private let task: Task<Void, any Error>

    init(_ hub: SimulatedAirHub<C>) {
        self.hub = hub
        task = Task { try await hub.run() }
    }

    var socketPath: String { hub.socketPath }

    /// Stops the hub (which removes its socket) and removes the socket's folder.
    func stop() async {
        task.cancel()
        _ = await task.result
        rmdir((socketPath as NSString).deletingLastPathComponent)
    }

    /// Waits until the hub has `scanning` scanners and `advertising` advertisers, or 60 s (the
    /// whole suite starting at once on two cores has kept clients from joining for 30 s). The
    /// census is read once more after the deadline, so a wait that slept through it still sees
    /// clients that joined meanwhile.
    func waitFor(scanning: Int = 0, advertising: Int = 0) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let census = hub.census
            if census.scanning >= scanning, census.advertising >= advertising { return true }
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Runs a scanner in the background and keeps what it yields.
final class AirProbe: Sendable {
    private final class Received: Sendable {
        let advertisements = Mutex<[Advertisement]>([])
        let failure = Mutex<(any Error)?>(nil)
        let finished = Mutex(false)
    }

    private let state = Received()
    private let task: Task<Void, Never>

    init(_ scanner: some AdvertisementScanner) {
        let state = self.state
        task = Task {
            do {
                try await scanner.scan { advertisement in state.advertisements.withLock { $0.append(advertisement) } }
            } catch {
                state.failure.withLock { $0 = error }
            }
            state.finished.withLock { $0 = true }
        }
    }

    deinit { task.cancel() }

    var all: [Advertisement] { state.advertisements.withLock { $0 } }
    var error: (any Error)? { state.failure.withLock { $0 } }
    var hasFinished: Bool { state.finished.withLock { $0 } }

    /// The first advertisement satisfying `predicate`, waiting up to `timeout` for it.
    func first(within timeout: Duration = .seconds(60), where predicate: (Advertisement) -> Bool) async -> Advertisement? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let match = all.first(where: predicate) { return match }
            guard ContinuousClock.now < deadline, !hasFinished else { return all.first(where: predicate) }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the scan has ended by itself (or `timeout`); true if it did.
    func end(within timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !hasFinished, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return hasFinished
    }

    func stop() async {
        task.cancel()
        await task.value
    }
}

/// Advertises in the background until stopped.
final class AdvertiserTask: Sendable {
    private let task: Task<Void, any Error>

    init(_ advertiser: some Advertiser, _ payload: AdvertisingPayload) {
        task = Task { try await advertiser.advertise(payload) }
    }

    func stop() async throws {
        task.cancel()
        try await task.value
    }

    var result: Result<Void, any Error> { get async { await task.result } }
}

enum Fixtures {
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func iBeacon(minor: UInt16, power: Int8 = -59) -> IBeacon {
        IBeacon(uuid: uuid, major: 7, minor: minor, measuredPower: power)
    }

    /// The payload of a device advertising an iBeacon, as `nearplay advertise` builds it.
    static func payload(minor: UInt16, interval: Duration = .milliseconds(100)) -> AdvertisingPayload {
        AdvertisingPayload(manufacturerData: [CompanyIdentifier.apple.rawValue: iBeacon(minor: minor).manufacturerData],
                           interval: interval)
    }

    static func still(_ x: Double, _ y: Double = 0) -> [AirScenario.Waypoint] {
        [AirScenario.Waypoint(time: 0, x: x, y: y)]
    }
}
