import BeaconFrames
import Foundation
import Radio
import Ranging

/// Players that all advertise and scan in one simulated room, each device with its own radio
/// offsets: how far off one-way ranging is, and how far off the pair's two-way estimate
/// (``Ranging/TwoWayRanging``) is, against the distances the scenario fixes.
///
/// Runs the simulated air's physics in process (no hub, no sockets): every device advertises an
/// iBeacon at 10 Hz and every device listens, through its own ``Ranging/ProximityPipeline``.
///
/// An experiment, not a library feature: `nearplay-air-bench two-way` runs it. It lives in a
/// target of its own rather than in the benchmark's executable because SimulatedAirTests hold it
/// to what it claims, and tests import library targets.
public struct TwoWayAirExperiment: Sendable {
    /// How the devices' offsets arise.
    public enum OffsetModel: String, Sendable, CaseIterable {
        /// Each device's receiver reads up to ±`spread` dB off a reference, and the device
        /// advertises the 1 m power its own receiver measured of a reference beacon (what
        /// `nearplay calibrate ranging` measures); true transmit powers differ by up to ±2 dB.
        case selfCalibrated = "self-calibrated"
        /// Transmit and receive offsets each up to ±`spread` dB, unrelated; every device
        /// advertises the nominal −59 dBm.
        case independent
    }

    public var devices = 12
    /// Offsets are uniform in ±spread dB.
    public var spread = 8.0
    public var offsetModel = OffsetModel.selfCalibrated
    /// The room: exponent, per-packet noise (dB), loss.
    public var exponent = 2.8
    public var sigma = 4.0
    public var loss = 0.1
    /// Seconds simulated.
    public var seconds = 30.0
    /// Devices stand at random in a square this wide (m).
    public var roomWidth = 8.0
    public var seed: UInt64 = 1

    public init() {}

    /// One ordered pair's outcome: A's estimate of B one-way and two-way, and the truth.
    public struct Pair: Sendable {
        public var truth: Double
        public var oneWay: Double
        public var twoWay: Double
        public var twoWayInterval: ClosedRange<Double>?
    }

    public struct Outcome: Sendable {
        public var pairs: [Pair] = []

        public init(pairs: [Pair] = []) { self.pairs = pairs }

        public var oneWayMedianError: Double? { Calibration.median(pairs.map { abs($0.oneWay - $0.truth) }) }
        public var twoWayMedianError: Double? { Calibration.median(pairs.map { abs($0.twoWay - $0.truth) }) }
        /// The two-way median error over the one-way one.
        public var ratio: Double? {
            guard let one = oneWayMedianError, let two = twoWayMedianError, one > 0 else { return nil }
            return two / one
        }
    }

    public static let nominalPower = -59.0

    public func run(configuration: RangingConfiguration = RangingConfiguration()) -> Outcome {
        var random = SplitMix64(seed: seed)
        var scenarioDevices: [String: AirScenario.Device] = [:]
        var positions: [(x: Double, y: Double)] = []
        var advertised: [Int] = []
        for index in 0..<devices {
            let x = Double.random(in: 0...roomWidth, using: &random), y = Double.random(in: 0...roomWidth, using: &random)
            positions.append((x, y))
            let device: AirScenario.Device
            let power: Double
            switch offsetModel {
            case .selfCalibrated:
                let gain = Double.random(in: -spread...spread, using: &random), transmit = Double.random(in: -2...2, using: &random)
                power = (Self.nominalPower + gain).rounded()
                // The frame carries `power`; the air adds txOffset to it: the true power is nominal + transmit.
                device = AirScenario.Device(waypoints: [.init(time: 0, x: x, y: y)],
                                            txOffset: Self.nominalPower + transmit - power, rxOffset: gain)
            case .independent:
                power = Self.nominalPower
                device = AirScenario.Device(waypoints: [.init(time: 0, x: x, y: y)],
                                            txOffset: Double.random(in: -spread...spread, using: &random), rxOffset: Double.random(in: -spread...spread, using: &random))
            }
            advertised.append(Int(power))
            scenarioDevices[Self.name(index)] = device
        }
        var air = AirSimulation(scenario: AirScenario(exponent: exponent, sigma: sigma, loss: loss, seed: seed &+ 1,
                                                      devices: scenarioDevices, source: "two-way experiment"))
        var listeners: [AirSimulation.ListenerID: Int] = [:]
        for index in 0..<devices {
            let frame = IBeacon(uuid: Self.uuid, major: 1, minor: UInt16(index + 1), measuredPower: Int8(advertised[index]))
            _ = air.startAdvertising(device: Self.name(index), data: frame.advertisingData(), interval: 0.1)
            if let listener = air.startListening(device: Self.name(index)) { listeners[listener] = index }
        }
        var pipelines = Array(repeating: ProximityPipeline(configuration: configuration), count: devices)
        air.feed(for: seconds, listeners: listeners, into: &pipelines)

        func direction(_ listener: Int, hears speaker: Int) -> TwoWayRanging.Direction? {
            let identity = BeaconIdentity.iBeacon(uuid: Self.uuid, major: 1, minor: UInt16(speaker + 1))
            guard let track = pipelines[listener].tracker.track(identity), let rssi = track.filteredRSSI else { return nil }
            return TwoWayRanging.Direction(filteredRSSI: rssi, measuredPower: Double(track.measuredPower ?? advertised[speaker]),
                                           filterVariance: track.filterVariance)
        }
        var result = Outcome()
        for a in 0..<devices {
            for b in 0..<devices where a != b {
                guard let forward = direction(a, hears: b), let reverse = direction(b, hears: a),
                      let one = TwoWayRanging.estimate(forward: forward, reverse: nil, model: configuration.distanceModel,
                                                       uncertainty: configuration.uncertainty),
                      let two = TwoWayRanging.estimate(forward: forward, reverse: reverse, model: configuration.distanceModel,
                                                       uncertainty: configuration.uncertainty) else { continue }
                let dx = positions[a].x - positions[b].x, dy = positions[a].y - positions[b].y
                result.pairs.append(Pair(truth: max(0.1, (dx * dx + dy * dy).squareRoot()), oneWay: one.distance,
                                         twoWay: two.distance, twoWayInterval: two.interval))
            }
        }
        return result
    }

    static let uuid = BeaconUUID(high: 0x4E65_6172_706C_6179, low: 0x2D32_7761_7900_0001)
    static func name(_ index: Int) -> String { "player-\(index + 1)" }
}
