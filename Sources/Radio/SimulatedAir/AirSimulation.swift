import BeaconFrames
import Foundation
import HeapModule
import Ranging

/// The simulated air's physics, with time as a parameter: who transmits when, who hears each
/// frame and how strongly. No I/O; the hub drives it from its clock.
///
/// Each advertiser transmits every `interval` plus a random 0–10 ms (the Core specification's
/// advDelay, Vol 6, Part B, 4.4.2.2.1). Each listener other than the sender's own device hears a
/// frame, unless it is lost, at
/// `rssi = txPower_1m − 10·n·log10(max(d, 0.1)) + N(0, σ) + txOffset + rxOffset`, rounded, where
/// txPower_1m is the frame's own measured power (iBeacon, AltBeacon, Eddystone) or −59 dBm;
/// frames under −100 dBm are not heard. Deterministic for a scenario and a sequence of calls.
public struct AirSimulation: Sendable {
    public typealias TransmitterID = Int
    public typealias ListenerID = Int

    /// One frame heard by one listener.
    public struct Delivery: Sendable, Hashable {
        public var listener: ListenerID
        /// Scenario seconds at which it was sent.
        public var time: Double
        public var address: BluetoothAddress
        public var rssi: Int
        public var data: [UInt8]
    }

    private struct Transmitter {
        /// The scenario device it belongs to; nil for the hub's own beacons.
        var device: String?
        var address: BluetoothAddress
        var data: [UInt8]
        var interval: Double
        var measuredPower: Double
        var txOffset: Double
        var waypoints: [AirScenario.Waypoint]
    }

    private struct Listener {
        var id: ListenerID
        var device: String
        var waypoints: [AirScenario.Waypoint]
        var rxOffset: Double
    }

    private struct Due: Comparable {
        var time: Double
        var transmitter: TransmitterID

        static func < (a: Due, b: Due) -> Bool { (a.time, a.transmitter) < (b.time, b.transmitter) }
    }

    /// Frames weaker than this (dBm) are not heard.
    public static let sensitivity = -100
    /// 1 m power assumed for frames that carry none.
    public static let defaultMeasuredPower = -59
    /// The largest random delay added to each advertising interval, in seconds.
    public static let largestAdvertisingDelay = 0.01
    /// A transmitter further behind than this (scenario seconds; the hub stalled, or its clock
    /// jumped) skips what it missed instead of sending it all at once.
    public static let largestLag = 2.0

    public let scenario: AirScenario
    /// Scenario seconds up to which transmissions have been made.
    public private(set) var now: Double = 0
    private var transmitters: [TransmitterID: Transmitter] = [:]
    private var listeners: [Listener] = []
    private var schedule = Heap<Due>()
    private var random: SplitMix64
    private var nextID = 0

    public init(scenario: AirScenario) {
        self.scenario = scenario
        random = SplitMix64(seed: scenario.seed)
        for beacon in scenario.beacons {
            let data = beacon.frame.advertisingData(includeFlags: false)
            add(Transmitter(device: nil, address: beacon.address ?? SimulatedAir.address(of: beacon.name), data: data,
                            interval: beacon.interval, measuredPower: Double(beacon.frame.measuredPower),
                            txOffset: beacon.txOffset, waypoints: beacon.waypoints))
        }
    }

    /// Whether the scenario has a device by this name.
    public func knows(device: String) -> Bool { scenario.devices[device] != nil }

    /// Makes `device` transmit `data` (AD structures) every `interval` seconds (clamped to
    /// Bluetooth's 20 ms to 10.24 s) from now on, from `address` (by default the device's own,
    /// ``SimulatedAir/address(of:)``); nil for a device the scenario does not have.
    public mutating func startAdvertising(device: String, data: [UInt8], interval: Double,
                                          address: BluetoothAddress? = nil) -> TransmitterID? {
        guard let scripted = scenario.devices[device] else { return nil }
        return add(Transmitter(device: device, address: address ?? SimulatedAir.address(of: device), data: data,
                               interval: Self.bounded(interval), measuredPower: Self.measuredPower(of: data),
                               txOffset: scripted.txOffset, waypoints: scripted.waypoints))
    }

    /// Makes a transmitter send `data` every `interval` seconds from `address`, all three from
    /// its next transmission on (its schedule is kept): a rotating identity's switch, which no
    /// frame sees half done. False for a transmitter that is not (or no longer) there.
    public mutating func change(_ id: TransmitterID, data: [UInt8], interval: Double, address: BluetoothAddress) -> Bool {
        guard transmitters[id] != nil else { return false }
        transmitters[id]!.data = data
        transmitters[id]!.interval = Self.bounded(interval)
        transmitters[id]!.measuredPower = Self.measuredPower(of: data)
        transmitters[id]!.address = address
        return true
    }

    private static func bounded(_ interval: Double) -> Double {
        interval.isFinite ? min(max(interval, AirScenario.intervals.lowerBound), AirScenario.intervals.upperBound) : 0.1
    }

    private static func measuredPower(of data: [UInt8]) -> Double {
        Double(Sighting.decodeIdentity(data)?.1 ?? defaultMeasuredPower)
    }

    public mutating func stopAdvertising(_ id: TransmitterID) {
        // Its entry in the schedule is dropped when it comes up.
        transmitters[id] = nil
    }

    /// Makes `device` hear what others transmit from now on; nil for a device the scenario does
    /// not have.
    public mutating func startListening(device: String) -> ListenerID? {
        guard let scripted = scenario.devices[device] else { return nil }
        let id = nextID
        nextID += 1
        listeners.append(Listener(id: id, device: device, waypoints: scripted.waypoints, rxOffset: scripted.rxOffset))
        return id
    }

    public mutating func stopListening(_ id: ListenerID) {
        listeners.removeAll { $0.id == id }
    }

    public var listenerCount: Int { listeners.count }

    /// Makes every transmission due up to `time` (scenario seconds), in time order, handing each
    /// frame heard to `deliver`.
    public mutating func advance(to time: Double, deliver: (Delivery) -> Void) {
        guard time > now else { return }
        now = time
        while let due = schedule.min, due.time <= time {
            schedule.removeMin()
            guard let transmitter = transmitters[due.transmitter] else { continue }
            if time - due.time > Self.largestLag {
                schedule.insert(Due(time: time + random.nextDouble() * transmitter.interval, transmitter: due.transmitter))
                continue
            }
            transmit(transmitter, at: due.time, deliver: deliver)
            let delay = random.nextDouble() * Self.largestAdvertisingDelay
            schedule.insert(Due(time: due.time + transmitter.interval + delay, transmitter: due.transmitter))
        }
    }

    @discardableResult
    private mutating func add(_ transmitter: Transmitter) -> TransmitterID {
        let id = nextID
        nextID += 1
        transmitters[id] = transmitter
        // A random phase, so transmitters that start together do not stay in step.
        schedule.insert(Due(time: now + random.nextDouble() * transmitter.interval, transmitter: id))
        return id
    }

    private mutating func transmit(_ transmitter: Transmitter, at time: Double, deliver: (Delivery) -> Void) {
        guard !listeners.isEmpty else { return }
        let from = transmitter.waypoints.position(at: time)
        for listener in listeners where listener.device != transmitter.device {
            if scenario.loss > 0, random.nextDouble() < scenario.loss { continue }
            let to = listener.waypoints.position(at: time)
            let distance = ((from.x - to.x) * (from.x - to.x) + (from.y - to.y) * (from.y - to.y)).squareRoot()
            let noise = scenario.sigma > 0 ? scenario.sigma * random.nextGaussian() : 0
            let rssi = (Self.meanRSSI(measuredPower: transmitter.measuredPower, distance: distance,
                                      exponent: scenario.exponent)
                + noise + transmitter.txOffset + listener.rxOffset).rounded()
            guard rssi >= Double(Self.sensitivity) else { continue }
            deliver(Delivery(listener: listener.id, time: time, address: transmitter.address,
                             rssi: Int(min(rssi, 20)), data: transmitter.data))
        }
    }

    /// The log-distance model without noise or offsets, in dBm (``Ranging/PathLoss``: distances
    /// under ``Ranging/PathLoss/nearest`` count as that).
    public static func meanRSSI(measuredPower: Double, distance: Double, exponent: Double) -> Double {
        PathLoss.rssi(atDistance: distance, measuredPower: measuredPower, exponent: exponent)
    }
}
