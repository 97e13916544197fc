import BeaconFrames

/// A room for the simulated air: how signals fade, where each device and beacon is over time.
///
/// Read from JSON with ``load(contentsOf:)`` (the format is in the README); times are scenario
/// seconds since the hub started, positions metres on a plane.
public struct AirScenario: Sendable, Hashable {
    /// A scripted position: at `time` seconds the device is at (`x`, `y`) metres.
    public struct Waypoint: Sendable, Hashable {
        public var time: Double
        public var x: Double
        public var y: Double

        public init(time: Double, x: Double, y: Double) {
            self.time = time
            self.x = x
            self.y = y
        }
    }

    /// A device that runs a client process (a scanner, an advertiser or both) under its name.
    public struct Device: Sendable, Hashable {
        public var waypoints: [Waypoint]
        /// Added to the RSSI of every frame this device sends, in dB (a stronger or weaker radio).
        public var txOffset: Double
        /// Added to the RSSI of every frame this device hears, in dB (its receiver's gain).
        public var rxOffset: Double

        public init(waypoints: [Waypoint], txOffset: Double = 0, rxOffset: Double = 0) {
            self.waypoints = waypoints
            self.txOffset = txOffset
            self.rxOffset = rxOffset
        }
    }

    /// An iBeacon the hub transmits itself, with no client process behind it.
    public struct Beacon: Sendable, Hashable {
        /// Names the beacon in logs and gives it its address; unique among beacons and devices.
        public var name: String
        public var frame: IBeacon
        /// Seconds between advertising events (before the 0–10 ms random delay).
        public var interval: Double
        public var waypoints: [Waypoint]
        public var txOffset: Double
        /// The address it sends from; nil for the one its name gives (``SimulatedAir/address(of:)``).
        public var address: BluetoothAddress?

        public init(name: String, frame: IBeacon, interval: Double = 0.1, waypoints: [Waypoint], txOffset: Double = 0,
                    address: BluetoothAddress? = nil) {
            self.name = name
            self.frame = frame
            self.interval = interval
            self.waypoints = waypoints
            self.txOffset = txOffset
            self.address = address
        }
    }

    /// The log-distance path-loss exponent n (2 in free space, 2.5–4 indoors).
    public var exponent: Double
    /// Standard deviation of the per-packet Gaussian noise, in dB.
    public var sigma: Double
    /// Probability that any one packet is lost, 0…1.
    public var loss: Double
    /// Seeds the noise, the losses, the advertising delays and generated beacon positions.
    public var seed: UInt64
    public var devices: [String: Device]
    /// Static beacons, generators already expanded.
    public var beacons: [Beacon]
    /// Where the scenario came from, for messages (a file path, or a description).
    public var source: String

    public init(exponent: Double = 2, sigma: Double = 2, loss: Double = 0, seed: UInt64 = 1,
                devices: [String: Device], beacons: [Beacon] = [], source: String = "scenario") {
        self.exponent = exponent
        self.sigma = sigma
        self.loss = loss
        self.seed = seed
        self.devices = devices
        self.beacons = beacons
        self.source = source
    }

    /// Advertising intervals the hub accepts, in seconds: Bluetooth's 20 ms to 10.24 s.
    public static let intervals: ClosedRange<Double> = 0.02...10.24
}

extension [AirScenario.Waypoint] {
    /// The position at `time`: interpolated linearly between waypoints, held before the first and
    /// after the last. The origin when there are none.
    public func position(at time: Double) -> (x: Double, y: Double) {
        guard let first, let last else { return (0, 0) }
        if time <= first.time { return (first.x, first.y) }
        if time >= last.time { return (last.x, last.y) }
        // Few waypoints per device: a linear walk is cheaper than a search.
        var index = 1
        while index < count - 1, self[index].time < time { index += 1 }
        let a = self[index - 1], b = self[index]
        let span = b.time - a.time
        guard span > 0 else { return (b.x, b.y) }
        let f = (time - a.time) / span
        return (a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f)
    }
}
