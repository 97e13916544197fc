import BeaconFrames
import Foundation
import Radio
import Ranging

/// Crowd calibration (``Ranging/CrowdCalibration``) on the simulated air's physics: players
/// mingle in a room whose exponent nobody knows, every device with its own transmit and receive
/// offsets, and the solve from their readings of each other is held to the truth.
///
/// Two phases, both in process (no hub, no sockets), as ``TwoWayAirExperiment`` runs them:
/// - *mingling*: `players` walk at 0.3–1.2 m/s toward random points of the room for `seconds`,
///   location beacons (if any) stand at `beacons`, everyone advertises at 1 Hz and listens; what
///   two devices heard of each other within one second is an exchange. Beacon pairs carry their
///   distance when `beaconDistancesKnown` (their owners entered where they stand).
/// - *scoring*: the players stand still at random places for `scoringSeconds`, advertising at
///   10 Hz through the agent's pipeline (as in the two-way experiment); each ordered pair's
///   one-way estimate uncalibrated (offsets 0, exponent 2.8) against the same reading corrected by
///   the solve's `t_B + g_A` and ranged with its exponent.
///
/// An experiment, not a library feature: `nearplay-air-bench crowd` runs it, and
/// `nearplay-air-bench crowd-beacons` with no players (beacons alone, nothing to score).
public struct CrowdAirExperiment: Sendable {
    public var players = 12
    /// Location beacons' spots (m), empty for none.
    public var beacons: [Spot] = []
    public var beaconDistancesKnown = true
    /// The first `anchors` players' offsets are known to the solve (± 0.5 dB), as a device
    /// calibrated by a walk would be.
    public var anchors = 0
    /// Transmit and receive offsets are each uniform in ±spread dB, unrelated.
    public var spread = 8.0
    /// The room's exponent; nil draws one uniform in 2–3.5 from the seed.
    public var exponent: Double?
    public var sigma = 4.0
    public var loss = 0.1
    public var seconds = 600.0
    public var scoringSeconds = 30.0
    public var roomWidth = 8.0
    public var seed: UInt64 = 1
    public var options = CrowdCalibration.Options()

    public struct Spot: Sendable, Hashable {
        public var x: Double
        public var y: Double

        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    public init() {}

    public struct Outcome: Sendable {
        public var exponent: Double
        public var solution: CrowdCalibration.Solution
        /// Per player: true transmit and receive offsets.
        public var transmit: [Double]
        public var receive: [Double]
        public var exchanges: Int
        /// Every ordered pair's one-way error (m) in the scoring phase, uncalibrated and calibrated.
        public var oneWayUncalibratedErrors: [Double]
        public var oneWayCalibratedErrors: [Double]
        public var oneWayUncalibratedMedianError: Double? { Calibration.median(oneWayUncalibratedErrors) }
        public var oneWayCalibratedMedianError: Double? { Calibration.median(oneWayCalibratedErrors) }

        public var anchors: Int
        /// |estimated − true| of each player's t + g, t and g (dB), anchors left out.
        public var sumErrors: [Double] { errors { $0.transmit + $0.receive } truth: { $0 + $1 } }
        public var transmitErrors: [Double] { errors { $0.transmit } truth: { t, _ in t } }
        public var receiveErrors: [Double] { errors { $0.receive } truth: { _, g in g } }
        public var exponentError: Double? { solution.sites[""].map { abs($0.exponent - exponent) } }

        public var ratio: Double? {
            guard let calibrated = oneWayCalibratedMedianError, let uncalibrated = oneWayUncalibratedMedianError, uncalibrated > 0 else { return nil }
            return calibrated / uncalibrated
        }

        func errors(_ estimate: (CrowdCalibration.DeviceOffsets) -> Double, truth: (Double, Double) -> Double) -> [Double] {
            transmit.indices.dropFirst(anchors).compactMap { i in
                solution.devices[CrowdAirExperiment.name(i)].map { abs(estimate($0) - truth(transmit[i], receive[i])) }
            }
        }
    }

    public static let nominalPower = -59.0

    public func run() -> Outcome {
        var random = SplitMix64(seed: seed)
        let exponent = self.exponent ?? Double.random(in: 2...3.5, using: &random)
        let count = players + beacons.count
        var transmit: [Double] = [], receive: [Double] = []
        for _ in 0..<count {
            transmit.append(Double.random(in: -spread...spread, using: &random))
            receive.append(Double.random(in: -spread...spread, using: &random))
        }

        // Mingling.
        var devices: [String: AirScenario.Device] = [:]
        for index in 0..<count {
            let waypoints: [AirScenario.Waypoint]
            if index < players {
                var time = 0.0
                var x = Double.random(in: 0...roomWidth, using: &random), y = Double.random(in: 0...roomWidth, using: &random)
                let speed = Double.random(in: 0.3...1.2, using: &random)
                var walk = [AirScenario.Waypoint(time: 0, x: x, y: y)]
                while time < seconds {
                    let nx = Double.random(in: 0...roomWidth, using: &random), ny = Double.random(in: 0...roomWidth, using: &random)
                    time += max(0.1, ((nx - x) * (nx - x) + (ny - y) * (ny - y)).squareRoot() / speed)
                    (x, y) = (nx, ny)
                    walk.append(.init(time: time, x: x, y: y))
                }
                waypoints = walk
            } else {
                let spot = beacons[index - players]
                waypoints = [.init(time: 0, x: spot.x, y: spot.y)]
            }
            devices[Self.name(index)] = AirScenario.Device(waypoints: waypoints, txOffset: transmit[index], rxOffset: receive[index])
        }
        var air = AirSimulation(scenario: AirScenario(exponent: exponent, sigma: sigma, loss: loss, seed: seed &+ 1,
                                                      devices: devices, source: "crowd experiment"))
        var listeners: [AirSimulation.ListenerID: Int] = [:]
        var speakers: [BluetoothAddress: Int] = [:]
        for index in 0..<count {
            let frame = IBeacon(uuid: Self.uuid, major: 2, minor: UInt16(index + 1), measuredPower: Int8(Self.nominalPower))
            _ = air.startAdvertising(device: Self.name(index), data: frame.advertisingData(), interval: 1)
            speakers[SimulatedAir.address(of: Self.name(index))] = index
            if let listener = air.startListening(device: Self.name(index)) { listeners[listener] = index }
        }
        // heard[second][listener * count + speaker]: the RSSI, or nil.
        let secondsCount = Int(seconds.rounded(.up))
        var heard = [[Int?]](repeating: [Int?](repeating: nil, count: count * count), count: secondsCount)
        for step in 1...(secondsCount * 100) {
            air.advance(to: Double(step) / 100) { delivery in
                guard let listener = listeners[delivery.listener], let speaker = speakers[delivery.address] else { return }
                let second = Int(delivery.time)
                guard second < secondsCount else { return }
                heard[second][listener * count + speaker] = delivery.rssi
            }
        }
        var exchanges: [CrowdCalibration.Exchange] = []
        func reading(_ rssi: Int?) -> TwoWayRanging.Direction? {
            rssi.map { .init(filteredRSSI: Double($0), measuredPower: Self.nominalPower, filterVariance: sigma * sigma + 1.0 / 12) }
        }
        for second in 0..<secondsCount {
            for a in 0..<count {
                for b in (a + 1)..<count {
                    let forward = heard[second][a * count + b], reverse = heard[second][b * count + a]
                    guard forward != nil || reverse != nil else { continue }
                    var distance: Double?
                    if a >= players, b >= players, beaconDistancesKnown {
                        let p = beacons[a - players], q = beacons[b - players]
                        distance = ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot()
                    }
                    exchanges.append(.init(first: Self.name(a), second: Self.name(b), firstHearsSecond: reading(forward),
                                           secondHearsFirst: reading(reverse), distance: distance))
                }
            }
        }
        let calibrationDevices = (0..<count).map {
            CrowdCalibration.Device(id: Self.name($0), kind: $0 < players ? .player : .locationBeacon,
                                    known: $0 < anchors ? .init(transmit: transmit[$0], receive: receive[$0]) : nil)
        }
        let solution = CrowdCalibration.solve(devices: calibrationDevices, exchanges: exchanges, options: options)

        // Scoring: the players stand still; one-way, uncalibrated and calibrated.
        var positions: [(x: Double, y: Double)] = []
        var still: [String: AirScenario.Device] = [:]
        for index in 0..<players {
            let x = Double.random(in: 0...roomWidth, using: &random), y = Double.random(in: 0...roomWidth, using: &random)
            positions.append((x, y))
            still[Self.name(index)] = AirScenario.Device(waypoints: [.init(time: 0, x: x, y: y)],
                                                        txOffset: transmit[index], rxOffset: receive[index])
        }
        var scoringAir = AirSimulation(scenario: AirScenario(exponent: exponent, sigma: sigma, loss: loss, seed: seed &+ 2,
                                                             devices: still, source: "crowd experiment, scoring"))
        var scoringListeners: [AirSimulation.ListenerID: Int] = [:]
        for index in 0..<players {
            let frame = IBeacon(uuid: Self.uuid, major: 2, minor: UInt16(index + 1), measuredPower: Int8(Self.nominalPower))
            _ = scoringAir.startAdvertising(device: Self.name(index), data: frame.advertisingData(), interval: 0.1)
            if let listener = scoringAir.startListening(device: Self.name(index)) { scoringListeners[listener] = index }
        }
        let configuration = RangingConfiguration()
        var pipelines = Array(repeating: ProximityPipeline(configuration: configuration), count: players)
        scoringAir.feed(for: scoringSeconds, listeners: scoringListeners, into: &pipelines)
        let calibratedModel = DistanceModel.logDistance(exponent: solution.sites[""]?.exponent ?? 2.8)
        var uncalibratedErrors: [Double] = [], calibratedErrors: [Double] = []
        for a in 0..<players {
            for b in 0..<players where a != b {
                let identity = BeaconIdentity.iBeacon(uuid: Self.uuid, major: 2, minor: UInt16(b + 1))
                guard let track = pipelines[a].tracker.track(identity), let rssi = track.filteredRSSI,
                      let offset = solution.readingOffset(listener: Self.name(a), speaker: Self.name(b)) else { continue }
                let raw = TwoWayRanging.Direction(filteredRSSI: rssi, measuredPower: Self.nominalPower, filterVariance: track.filterVariance)
                var corrected = raw
                corrected.filteredRSSI -= offset.value
                guard let one = TwoWayRanging.estimate(forward: raw, reverse: nil, model: configuration.distanceModel,
                                                       uncertainty: configuration.uncertainty),
                      let calibrated = TwoWayRanging.estimate(forward: corrected, reverse: nil, model: calibratedModel,
                                                              uncertainty: configuration.uncertainty) else { continue }
                let dx = positions[a].x - positions[b].x, dy = positions[a].y - positions[b].y
                let truth = max(0.1, (dx * dx + dy * dy).squareRoot())
                uncalibratedErrors.append(abs(one.distance - truth))
                calibratedErrors.append(abs(calibrated.distance - truth))
            }
        }
        return Outcome(exponent: exponent, solution: solution, transmit: Array(transmit.prefix(players)),
                       receive: Array(receive.prefix(players)), exchanges: exchanges.count,
                       oneWayUncalibratedErrors: uncalibratedErrors, oneWayCalibratedErrors: calibratedErrors, anchors: anchors)
    }

    static let uuid = BeaconUUID(high: 0x4E65_6172_706C_6179, low: 0x2D63_726F_7764_0001)
    public static func name(_ index: Int) -> String { "device-\(index + 1)" }
}
