import BeaconFrames
import BusTestSupport
import Radio
import Synchronization

/// Runs a scanner in the background and keeps what it yields, so a test can wait for what it
/// expects with a deadline instead of hanging.
final class ScanProbe: Sendable {
    private final class Received: Sendable {
        let advertisements = Mutex<[Advertisement]>([])
        let failure = Mutex<(any Error)?>(nil)
    }

    private let state = Received()
    private let task: Task<Void, Never>

    init(_ scanner: some AdvertisementScanner) {
        let state = self.state
        task = Task {
            do {
                try await scanner.scan { advertisement in
                    state.advertisements.withLock { $0.append(advertisement) }
                }
            } catch {
                state.failure.withLock { $0 = error }
            }
        }
    }

    deinit { task.cancel() }

    var all: [Advertisement] { state.advertisements.withLock { $0 } }
    var error: (any Error)? { state.failure.withLock { $0 } }

    /// Waits until an advertisement received after `index` satisfies `predicate`; returns it, or
    /// nil after `timeout`.
    func first(after index: Int = 0, within timeout: Duration = .seconds(10),
               where predicate: @escaping (Advertisement) -> Bool) async -> Advertisement? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let match = state.advertisements.withLock({ Array($0.dropFirst(index)) }).first(where: predicate) { return match }
            // Checked after looking, so a sleep that overran the deadline (a busy machine) still
            // gets one last look.
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the scanner and waits until its task has finished (discovery stopped).
    func stop() async {
        task.cancel()
        await task.value
    }
}

/// Two iBeacons, as their AD bytes go over the air (without flags, as BlueZ reports them).
enum Beacons {
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let first = IBeacon(uuid: uuid, major: 1, minor: 2, measuredPower: -59)
    static let second = IBeacon(uuid: uuid, major: 1, minor: 3, measuredPower: -59)
    static let firstAddress = "C0:FF:EE:00:00:01"
    static let secondAddress = "C0:FF:EE:00:00:02"

    static func advertisement(_ beacon: IBeacon, _ address: String, rssi: Int, time: Double = 0) -> Advertisement {
        Advertisement(time: time, address: BluetoothAddress(address)!, addressType: .public, rssi: rssi,
                      data: beacon.advertisingData(includeFlags: false))
    }
}

/// A private bus with the BlueZ mock on it; the code under test is given its address.
struct MockedBlueZ {
    let bus: PrivateBus
    let mock: BlueZMock

    static func start(adapter: Bool = true) async throws -> MockedBlueZ {
        let bus = try await PrivateBus()
        do {
            let mock = try await BlueZMock(bus: bus)
            if adapter { try await mock.addAdapter("hci0") }
            return MockedBlueZ(bus: bus, mock: mock)
        } catch {
            bus.stop()
            throw error
        }
    }

    var address: String { bus.address }

    func stop() {
        mock.kill()
        bus.stop()
    }
}
