import DBus
import Logging
import Synchronization
import SystemSupport

/// Counts of what the BlueZ scanner did about silent radios, for the agent's metrics.
public final class ScanRecoveries: Sendable {
    private let discoveryRestarts = Atomic<Int>(0)
    private let powerCycles = Atomic<Int>(0)

    public init() {}

    /// Times discovery was restarted because advertisements stopped implausibly.
    public var discoveryRestartCount: Int { discoveryRestarts.load(ordering: .relaxed) }
    /// Times the adapter's power was cycled because a discovery restart did not help.
    public var powerCycleCount: Int { powerCycles.load(ordering: .relaxed) }

    func count(_ action: ScanStallDetector.Action) {
        switch action {
        case .restartDiscovery: discoveryRestarts.add(1, ordering: .relaxed)
        case .cyclePower: powerCycles.add(1, ordering: .relaxed)
        }
    }
}

/// What the scan loop tells the stall watch: advertisements as they arrive, and where discovery
/// runs. Shared between the scan's task and the watch's, under a lock (one uncontended lock per
/// advertisement).
final class ScanActivity: Sendable {
    private struct State {
        var detector: ScanStallDetector
        /// The session and adapter discovery runs on; nil while it does not run.
        var discovery: (session: BlueZSession, adapter: DBusObjectPath, name: String)?
    }

    private let state: Mutex<State>
    private let clock = ContinuousClock()
    private let origin = ContinuousClock.now

    init(_ configuration: ScanStallDetector.Configuration) {
        state = Mutex(State(detector: ScanStallDetector(configuration)))
    }

    private var now: Double { origin.duration(to: .now).inSeconds }

    func advertisement() {
        let time = now
        state.withLock { $0.detector.advertisement(at: time) }
    }

    func discovering(_ session: BlueZSession?, on adapter: DBusObjectPath?, name: String = "") {
        let time = now
        state.withLock { state in
            if let session, let adapter {
                state.discovery = (session, adapter, name)
                state.detector.discoveryStarted(at: time)
            } else {
                state.discovery = nil
            }
        }
    }

    /// The action a silence now calls for, with where to take it; nil while discovery is not running.
    func check() -> (ScanStallDetector.Action, session: BlueZSession, adapter: DBusObjectPath, name: String)? {
        let time = now
        return state.withLock { state in
            guard let discovery = state.discovery, let action = state.detector.check(at: time) else { return nil }
            return (action, discovery.session, discovery.adapter, discovery.name)
        }
    }
}

/// Watches a BlueZ scan for implausible silence (``ScanStallDetector``) and acts on it: restarts
/// discovery, then cycles the adapter's power. The scan loop follows the adapter's changes as
/// usual, so it starts discovery again itself once the adapter is back on.
struct BlueZStallWatch {
    let activity: ScanActivity
    let recoveries: ScanRecoveries
    let checkInterval: Duration
    /// How long the adapter stays off in a power cycle.
    let powerOffTime: Duration
    let logger: Logger

    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: checkInterval)
            guard !Task.isCancelled, let (action, session, adapter, name) = activity.check() else { continue }
            recoveries.count(action)
            switch action {
            case .restartDiscovery(let silence, let rate):
                logger.warning("""
                    No advertisements for \(Self.seconds(silence)) s on Bluetooth adapter \(name), where \(Self.rate(rate)) a second \
                    were arriving: the controller may have stalled; restarting discovery.
                    """)
                try? await session.call(adapter, BlueZ.adapterInterface, BlueZ.Method.stopDiscovery, timeout: .seconds(2))
                do {
                    try await session.call(adapter, BlueZ.adapterInterface, BlueZ.Method.startDiscovery, timeout: .seconds(2))
                } catch {
                    // The scan loop restarts it when it sees discovery stopped; nothing lost.
                    logger.debug("Restarting discovery on \(name): \(error)")
                }
            case .cyclePower(let silence, let rate):
                logger.warning("""
                    Still no advertisements on Bluetooth adapter \(name) after restarting discovery (\(Self.seconds(silence)) s, \
                    where \(Self.rate(rate)) a second were arriving): switching the adapter off and on.
                    """)
                do {
                    try await setPowered(false, adapter, session)
                    try? await Task.sleep(for: powerOffTime)
                    try await setPowered(true, adapter, session)
                } catch {
                    logger.warning("Could not cycle the power of Bluetooth adapter \(name) (\(error)): run `bluetoothctl power off; bluetoothctl power on`.")
                }
            }
        }
    }

    private func setPowered(_ on: Bool, _ adapter: DBusObjectPath, _ session: BlueZSession) async throws {
        try await session.call(adapter, BlueZ.propertiesInterface, "Set",
                               [.string(BlueZ.adapterInterface), .string(BlueZ.Property.powered), .variant(.boolean(on))],
                               timeout: .seconds(5))
    }

    private static func seconds(_ value: Double) -> String { String(Int(value.rounded())) }
    private static func rate(_ value: Double) -> String { value >= 10 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10) }
}
