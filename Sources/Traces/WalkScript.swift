import BeaconFrames

/// A scripted walk: beacons with positions (distance from the receiver) over time.
///
/// Read from JSON:
/// `{"beacons":[{"beacon":"E2C56DB5-…/1/2","measured_power":-59,"interval":0.1,
///   "waypoints":[[0,8],[25,0.3],[60,8]]}]}`. A beacon transmits from its first waypoint's time
/// to its last; its distance is interpolated linearly between waypoints.
public struct WalkScript: Codable, Sendable, Hashable {
    public struct Beacon: Codable, Sendable, Hashable {
        /// The identity in event form (`UUID/major/minor`, `altbeacon:…`, `eddystone:…`).
        public var beacon: String
        public var address: String?
        /// RSSI at 1 m in dBm, sent in the frame.
        public var measuredPower: Int
        /// Advertising interval in seconds.
        public var interval: Double
        /// `[time s, distance m]` pairs, times increasing.
        public var waypoints: [[Double]]

        enum CodingKeys: String, CodingKey {
            case beacon, address, measuredPower = "measured_power", interval, waypoints
        }

        public init(beacon: String, address: String? = nil, measuredPower: Int = -59, interval: Double = 0.1, waypoints: [[Double]]) {
            self.beacon = beacon
            self.address = address
            self.measuredPower = measuredPower
            self.interval = interval
            self.waypoints = waypoints
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            beacon = try c.decode(String.self, forKey: .beacon)
            address = try c.decodeIfPresent(String.self, forKey: .address)
            measuredPower = try c.decodeIfPresent(Int.self, forKey: .measuredPower) ?? -59
            interval = try c.decodeIfPresent(Double.self, forKey: .interval) ?? 0.1
            waypoints = try c.decode([[Double]].self, forKey: .waypoints)
        }

        /// Distance at `time`, nil outside the beacon's active span.
        public func distance(at time: Double) -> Double? {
            guard let first = waypoints.first, let last = waypoints.last, time >= first[0], time <= last[0] else { return nil }
            for (a, b) in zip(waypoints, waypoints.dropFirst()) where time <= b[0] {
                let span = b[0] - a[0]
                return span <= 0 ? b[1] : a[1] + (b[1] - a[1]) * (time - a[0]) / span
            }
            return last[1]
        }
    }

    public var beacons: [Beacon]

    public init(beacons: [Beacon]) { self.beacons = beacons }

    /// What is wrong with the script, or nil. Messages name the beacon and field.
    public func problem() -> String? {
        if beacons.isEmpty { return "the script has no beacons" }
        for (i, beacon) in beacons.enumerated() {
            let name = "beacon \(i + 1) (\(beacon.beacon))"
            if BeaconIdentity(beacon.beacon) == nil { return "\(name): \"beacon\" is not an identity like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2" }
            if !(beacon.interval >= 0.02) { return "\(name): \"interval\" must be at least 0.02 s (BLE's minimum is 20 ms)" }
            if let address = beacon.address, BluetoothAddress(address) == nil {
                return "\(name): \"address\" \"\(address)\" is not a Bluetooth address like C0:FF:EE:00:00:01"
            }
            if !(-127...(-1)).contains(beacon.measuredPower) { return "\(name): \"measured_power\" must be between -127 and -1 dBm" }
            if beacon.waypoints.isEmpty { return "\(name): \"waypoints\" is empty" }
            for (j, point) in beacon.waypoints.enumerated() {
                guard point.count == 2, point[0].isFinite, point[1].isFinite, point[1] >= 0 else {
                    return "\(name): waypoint \(j + 1) must be [time, distance ≥ 0]"
                }
                if j > 0, point[0] < beacon.waypoints[j - 1][0] { return "\(name): waypoint \(j + 1) goes back in time" }
                if !(point[0] >= 0 && point[0] <= Self.longestWalk) { return "\(name): waypoint \(j + 1) must be between 0 and \(Int(Self.longestWalk)) s" }
            }
            let span = (beacon.waypoints.last?[0] ?? 0) - (beacon.waypoints.first?[0] ?? 0)
            if span / beacon.interval > Self.mostTransmissions {
                return "\(name): \(Int(span)) s at \(beacon.interval) s intervals is more than \(Int(Self.mostTransmissions)) advertisements; shorten the walk or lengthen the interval"
            }
        }
        return nil
    }

    /// The longest walk a script may describe, in seconds (a week).
    public static let longestWalk = 7 * 24 * 3600.0
    /// The most advertisements one scripted beacon may send.
    public static let mostTransmissions = 10_000_000.0

    /// Three beacons: one walked in to 0.3 m and out again, one standing at 2 m that is switched
    /// off at 45 s, one far away coming to 4 m. Shows enter, zones changing, and exits.
    public static let demo = WalkScript(beacons: [
        Beacon(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/1", address: "C0:FF:EE:00:00:01",
               waypoints: [[0, 8], [25, 0.3], [35, 0.3], [60, 8]]),
        Beacon(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2", address: "C0:FF:EE:00:00:02",
               measuredPower: -62, interval: 0.2, waypoints: [[5, 2], [45, 2]]),
        Beacon(beacon: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/2/7", address: "C0:FF:EE:00:00:03",
               measuredPower: -65, interval: 0.5, waypoints: [[20, 12], [60, 4]]),
    ])
}
