import BeaconFrames
import Foundation
import Radio
import Ranging
import Synchronization

/// A site calibration from the radio: one beacon held at known distances in turn, listened to
/// for a while at each, its readings filtered as every calibration filters them
/// (``Ranging/Calibration/reading(_:)``), ready for ``Ranging/Calibration/siteProfile(readings:spotShadowing:)``.
///
/// Without a beacon named, the session calibrates with the one heard loudest (median RSSI) at the
/// first distance: the one the person is holding. The listening time runs on the injected clock.
public struct LiveCalibration<C: Clock>: Sendable where C.Duration == Duration {
    public let scanner: any AdvertisementScanner
    /// How long the session listens at each distance.
    public let listening: Duration
    public let clock: C

    public init(scanner: any AdvertisementScanner, listening: Duration, clock: C) {
        self.scanner = scanner
        self.listening = listening
        self.clock = clock
    }

    /// The readings of `beacon` (or the loudest one) at each distance in turn. Before each
    /// distance it awaits `ready`, which returns once the beacon is held there (the command waits
    /// for Enter; what `ready` throws ends the session). Throws
    /// ``LiveCalibrationError/nothingHeard(beacon:distance:seconds:)`` when a distance gives no
    /// reading, and whatever the scanner throws.
    public func readings(at distances: [Double], of beacon: BeaconIdentity? = nil,
                         ready: (Double) async throws -> Void,
                         progress: (LiveCalibrationProgress) -> Void = { _ in }) async throws -> [(distance: Double, rssi: Int, measuredPower: Int)] {
        var identity = beacon
        var readings: [(distance: Double, rssi: Int, measuredPower: Int)] = []
        for distance in distances {
            try await ready(distance)
            progress(.listening(distance: distance))
            let heard = try await sightings()
            if identity == nil {
                identity = Dictionary(grouping: heard, by: \.identity).max { Self.medianRSSI($0.value) < Self.medianRSSI($1.value) }?.key
                if let identity { progress(.chose(identity)) }
            }
            let here = heard.filter { $0.identity == identity }
            guard !here.isEmpty else {
                let seconds = Double(listening.components.seconds) + Double(listening.components.attoseconds) * 1e-18
                throw LiveCalibrationError.nothingHeard(beacon: identity, distance: distance, seconds: seconds)
            }
            readings += here.map { (distance, $0.rssi, $0.measuredPower) }
            progress(.heard(distance: distance, readings: here.count, medianRSSI: Self.medianRSSI(here)))
        }
        return readings
    }

    /// The calibration readings the scanner gives within ``listening`` (less, when its source ends first).
    private func sightings() async throws -> [(identity: BeaconIdentity, rssi: Int, measuredPower: Int)] {
        let heard = HeardReadings()
        let scanner = scanner, clock = clock, listening = listening
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await scanner.scan { advertisement in
                    if let reading = Calibration.reading(advertisement) { heard.append(reading) }
                }
            }
            group.addTask { try await clock.sleep(for: listening) }
            try await group.next()
            group.cancelAll()
        }
        return heard.all
    }

    private static func medianRSSI(_ readings: [(identity: BeaconIdentity, rssi: Int, measuredPower: Int)]) -> Double {
        Calibration.median(readings.map { Double($0.rssi) }) ?? -.infinity
    }
}

/// What a scan heard, appended from the scan's task and read after it.
private final class HeardReadings: Sendable {
    private let readings = Mutex<[(identity: BeaconIdentity, rssi: Int, measuredPower: Int)]>([])

    func append(_ reading: (identity: BeaconIdentity, rssi: Int, measuredPower: Int)) { readings.withLock { $0.append(reading) } }

    var all: [(identity: BeaconIdentity, rssi: Int, measuredPower: Int)] { readings.withLock { $0 } }
}

extension LiveCalibration where C == ContinuousClock {
    /// A session that listens in real time.
    public init(scanner: any AdvertisementScanner, listening: Duration) {
        self.init(scanner: scanner, listening: listening, clock: ContinuousClock())
    }
}

/// What a ``LiveCalibration`` is doing, for the person holding the beacon.
public enum LiveCalibrationProgress: Sendable, Hashable {
    /// The beacon is in place; the session listens at `distance` now.
    case listening(distance: Double)
    /// No beacon was named: this one, heard loudest at the first distance, is calibrated with.
    case chose(BeaconIdentity)
    /// What was heard of the beacon at `distance`.
    case heard(distance: Double, readings: Int, medianRSSI: Double)
}

/// Why a live calibration gave no readings.
public enum LiveCalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing usable of `beacon` (nil: of any beacon that sends its measured power) was heard
    /// at `distance` in the `seconds` the session listened there.
    case nothingHeard(beacon: BeaconIdentity?, distance: Double, seconds: Double)

    public var description: String {
        switch self {
        case let .nothingHeard(beacon, distance, seconds):
            let which = beacon.map { "beacon \($0)" } ?? "any beacon that sends its measured power"
            return "heard no readings of \(which) in \(String(format: "%g", seconds)) s at \(DistanceText.measured(distance)): check that it advertises and that the radio scans"
        }
    }
}
