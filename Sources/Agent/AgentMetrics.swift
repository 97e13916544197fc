import BeaconFrames
import Foundation
import Prometheus
import Radio
import Synchronization

/// What the agent counts for `nearplay metrics` (the `metrics` verb of the local API): the radio's
/// advertisements and tracked beacons, identity resolutions answered from the cache, the
/// outgoing queue, reconnections of the lobby's event stream and the scanner's recoveries from
/// stalls. Written in the Prometheus text format by swift-prometheus.
public final class AgentMetrics: Sendable {
    /// Advertisements the radio delivered since the agent started.
    let advertisements = Atomic<Int>(0)
    /// Times the advertised identity rotated (including the first one).
    let rotations = Atomic<Int>(0)
    /// Beacons the ranging tracker holds, as of its last tick.
    let trackedBeacons = Atomic<Int>(0)
    /// (seconds, advertisements so far) at the last ticks, for the recent rate.
    private let samples = Mutex<[(time: Double, count: Int)]>([])
    private let origin = ContinuousClock.now
    private let registry = PrometheusCollectorRegistry()
    /// Values of the counters that live elsewhere, as last exported (counters only go up by deltas).
    private let exported = Mutex<[String: Int]>([:])

    public init() {}

    /// Notes the advertisement count once a second (the ranging tick), for the rate over the last 10 s.
    func tick() {
        let time = origin.duration(to: .now).inSeconds
        let count = advertisements.load(ordering: .relaxed)
        samples.withLock { samples in
            samples.append((time, count))
            if samples.count > 11 { samples.removeFirst(samples.count - 11) }
        }
    }

    /// Advertisements per second over the last (up to) 10 s.
    var advertisementRate: Double {
        samples.withLock { samples in
            guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
            return Double(last.count - first.count) / (last.time - first.time)
        }
    }

    /// The text exposition of these counts and of those read now.
    func exposition(queueDepth: Int, cacheHits: Int, cacheMisses: Int, reconnects: Int, recoveries: ScanRecoveries?) -> String {
        func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "nearplay", subsystem: "agent", metricName: name, unitName: unit, helpText: help)
        }
        func counter(_ name: String, _ help: String, labels: [(String, String)] = [], _ value: Int) {
            let counter = registry.makeCounter(descriptor: descriptor(name, "total", help), labels: labels)
            let key = name + labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
            let delta = exported.withLock { exported in
                defer { exported[key] = value }
                return value - exported[key, default: 0]
            }
            if delta > 0 { counter.increment(by: Int64(delta)) }
        }
        func gauge(_ name: String, _ unit: String, _ help: String, _ value: Double) {
            registry.makeGauge(descriptor: descriptor(name, unit, help)).set(value)
        }
        counter("advertisements", "Advertisements the radio delivered.", advertisements.load(ordering: .relaxed))
        gauge("advertisements", "per_second", "Advertisements a second over the last 10 s.", advertisementRate)
        gauge("tracked_beacons", "", "Beacons the ranging tracker follows now.", Double(trackedBeacons.load(ordering: .relaxed)))
        counter("resolutions", "Beacon identities resolved, from the cache or from the lobby.", labels: [("source", "cache")], cacheHits)
        counter("resolutions", "Beacon identities resolved, from the cache or from the lobby.", labels: [("source", "lobby")], cacheMisses)
        counter("identity_rotations", "Times the advertised beacon identity changed to a new period's.", rotations.load(ordering: .relaxed))
        gauge("queue_depth", "", "Operations waiting in the outgoing queue.", Double(queueDepth))
        counter("lobby_reconnects", "Times the lobby's event stream was connected again.", reconnects)
        counter("scan_restarts", "Discovery restarts and adapter power cycles after the radio fell silent.",
                labels: [("action", "discovery")], recoveries?.discoveryRestartCount ?? 0)
        counter("scan_restarts", "Discovery restarts and adapter power cycles after the radio fell silent.",
                labels: [("action", "power")], recoveries?.powerCycleCount ?? 0)
        return registry.emitToString()
    }
}

/// A scanner that counts what another one delivers.
struct CountingScanner: AdvertisementScanner {
    let base: any AdvertisementScanner
    let metrics: AgentMetrics

    func scan(_ receive: (Advertisement) async -> Void) async throws {
        let metrics = metrics
        try await base.scan { advertisement in
            metrics.advertisements.add(1, ordering: .relaxed)
            await receive(advertisement)
        }
    }
}

extension Agent {
    /// The agent's metrics now, in the Prometheus text format.
    public func metricsText() async -> String {
        metrics.exposition(
            queueDepth: await outbox.count, cacheHits: await resolver.cacheHits, cacheMisses: await resolver.cacheMisses,
            reconnects: await follower.reconnects, recoveries: (radio.scanner as? BlueZScanner)?.recoveries)
    }
}
