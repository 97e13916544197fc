import BeaconFrames
import Foundation

/// A scenario that cannot be used, naming the file and the field: `room.json:
/// devices.alice.waypoints[1]: expected [seconds, x, y]`.
public struct AirScenarioError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or the source given to ``AirScenario/init(json:source:)``).
    public var file: String
    /// The field as a path, `devices.alice.waypoints[1]`; empty for the document as a whole.
    public var field: String
    public var message: String

    public init(file: String, field: String, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    public var description: String {
        field.isEmpty ? "\(file): \(message)" : "\(file): \(field): \(message)"
    }
}

extension AirScenario {
    /// Reads and checks the scenario in the JSON file at `path`.
    public static func load(contentsOf path: String) throws(AirScenarioError) -> AirScenario {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)"
            throw AirScenarioError(file: path, field: "", message: "cannot read the scenario (\(reason))")
        }
        return try AirScenario(json: data, source: path)
    }

    /// Parses and checks a scenario; `source` names it in errors.
    public init(json: Data, source: String) throws(AirScenarioError) {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: json, options: [])
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw AirScenarioError(file: source, field: "", message: "not valid JSON (\(detail))")
        }
        self = try ScenarioReader(file: source).scenario(root)
    }
}

/// Walks the parsed JSON, keeping the path of each field for errors.
private struct ScenarioReader {
    let file: String

    func error(_ field: String, _ message: String) -> AirScenarioError {
        AirScenarioError(file: file, field: field, message: message)
    }

    func object(_ value: Any, _ field: String, keys: Set<String>) throws(AirScenarioError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw error(field, "expected an object") }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            let path = field.isEmpty ? unknown : "\(field).\(unknown)"
            throw error(path, "unknown key (expected one of \(keys.sorted().joined(separator: ", ")))")
        }
        return object
    }

    func number(_ value: Any?, _ field: String, default fallback: Double? = nil,
                in range: ClosedRange<Double>? = nil) throws(AirScenarioError) -> Double {
        guard let value else {
            if let fallback { return fallback }
            throw error(field, "missing (expected a number)")
        }
        guard let number = (value as? NSNumber)?.doubleValue, number.isFinite else {
            throw error(field, "expected a number")
        }
        if let range, !range.contains(number) {
            throw error(field, "\(number) is out of range (\(range.lowerBound) to \(range.upperBound))")
        }
        return number
    }

    func integer(_ value: Any?, _ field: String, default fallback: Int? = nil,
                 in range: ClosedRange<Int>) throws(AirScenarioError) -> Int {
        let number = try number(value, field, default: fallback.map(Double.init))
        guard number.rounded() == number, number >= Double(range.lowerBound), number <= Double(range.upperBound) else {
            throw error(field, "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(number)
    }

    func waypoints(_ value: Any?, _ field: String) throws(AirScenarioError) -> [AirScenario.Waypoint] {
        guard let value else { throw error(field, "missing (expected [[seconds, x, y], …])") }
        guard let list = value as? [Any], !list.isEmpty else {
            throw error(field, "expected a non-empty list of [seconds, x, y]")
        }
        var result: [AirScenario.Waypoint] = []
        for (index, item) in list.enumerated() {
            let path = "\(field)[\(index)]"
            guard let triple = item as? [Any], triple.count == 3 else { throw error(path, "expected [seconds, x, y]") }
            let numbers = triple.compactMap { ($0 as? NSNumber)?.doubleValue }.filter(\.isFinite)
            guard numbers.count == 3 else { throw error(path, "expected [seconds, x, y]") }
            if let previous = result.last, numbers[0] < previous.time {
                throw error(path, "time \(numbers[0]) comes before the previous waypoint's \(previous.time)")
            }
            result.append(AirScenario.Waypoint(time: numbers[0], x: numbers[1], y: numbers[2]))
        }
        return result
    }

    func scenario(_ root: Any) throws(AirScenarioError) -> AirScenario {
        let top = try object(root, "", keys: ["exponent", "sigma", "loss", "seed", "devices", "beacons"])
        var scenario = AirScenario(
            exponent: try number(top["exponent"], "exponent", default: 2, in: 0.5...10),
            sigma: try number(top["sigma"], "sigma", default: 2, in: 0...30),
            loss: try number(top["loss"], "loss", default: 0, in: 0...1),
            seed: UInt64(try integer(top["seed"], "seed", default: 1, in: 0...Int(Int32.max))),
            devices: [:], source: file)
        guard let devices = top["devices"] else { throw error("devices", "missing (expected an object of device names)") }
        guard let deviceObjects = devices as? [String: Any] else { throw error("devices", "expected an object of device names") }
        for name in deviceObjects.keys.sorted() {
            let field = "devices.\(name)"
            if let problem = SimulatedAir.problem(withDeviceName: name) { throw error(field, problem) }
            let device = try object(deviceObjects[name]!, field, keys: ["waypoints", "txOffset", "rxOffset"])
            scenario.devices[name] = AirScenario.Device(
                waypoints: try waypoints(device["waypoints"], "\(field).waypoints"),
                txOffset: try number(device["txOffset"], "\(field).txOffset", default: 0, in: -60...60),
                rxOffset: try number(device["rxOffset"], "\(field).rxOffset", default: 0, in: -60...60))
        }
        if let beacons = top["beacons"] {
            guard let list = beacons as? [Any] else { throw error("beacons", "expected a list of beacons") }
            var generator = SplitMix64(seed: scenario.seed ^ 0x6265_6163_6F6E_7321)
            var names = Set(scenario.devices.keys)
            for (index, item) in list.enumerated() {
                let field = "beacons[\(index)]"
                let made = (item as? [String: Any])?["generate"] != nil
                    ? try generated(item, field, generator: &generator)
                    : [try beacon(item, field)]
                for beacon in made {
                    guard names.insert(beacon.name).inserted else {
                        throw error(field, "the name “\(beacon.name)” is already taken by another beacon or device")
                    }
                    scenario.beacons.append(beacon)
                }
            }
        }
        return scenario
    }

    func identity(_ object: [String: Any], _ field: String) throws(AirScenarioError) -> BeaconUUID {
        guard let text = object["uuid"] else { throw error("\(field).uuid", "missing (expected a UUID)") }
        guard let string = text as? String, let uuid = BeaconUUID(string) else {
            throw error("\(field).uuid", "expected a UUID such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        return uuid
    }

    func beacon(_ item: Any, _ field: String) throws(AirScenarioError) -> AirScenario.Beacon {
        let object = try object(item, field, keys: [
            "name", "uuid", "major", "minor", "measuredPower", "interval", "waypoints", "txOffset", "address",
        ])
        let frame = IBeacon(
            uuid: try identity(object, field),
            major: UInt16(try integer(object["major"], "\(field).major", in: 0...65535)),
            minor: UInt16(try integer(object["minor"], "\(field).minor", in: 0...65535)),
            measuredPower: Int8(try integer(object["measuredPower"], "\(field).measuredPower", default: -59, in: -127...(-1))))
        let name: String
        if let given = object["name"] {
            guard let text = given as? String, !text.isEmpty else { throw error("\(field).name", "expected a non-empty string") }
            name = text
        } else {
            name = frame.identity.description
        }
        var address: BluetoothAddress?
        if let given = object["address"] {
            guard let text = given as? String, let parsed = BluetoothAddress(text) else {
                throw error("\(field).address", "expected an address such as C0:FF:EE:00:00:01")
            }
            address = parsed
        }
        return AirScenario.Beacon(
            name: name, frame: frame,
            interval: try number(object["interval"], "\(field).interval", default: 0.1, in: AirScenario.intervals),
            waypoints: try waypoints(object["waypoints"], "\(field).waypoints"),
            txOffset: try number(object["txOffset"], "\(field).txOffset", default: 0, in: -60...60),
            address: address)
    }

    /// `{"generate": N, "uuid": …, "major": 1, "firstMinor": 1, "interval": 0.1, "ring": [min, max],
    /// "center": [x, y], "measuredPower": -59}`: N beacons at random places between min and max
    /// metres from the centre, minors counting up.
    func generated(_ item: Any, _ field: String, generator: inout SplitMix64) throws(AirScenarioError) -> [AirScenario.Beacon] {
        let object = try object(item, field, keys: [
            "generate", "uuid", "major", "firstMinor", "measuredPower", "interval", "ring", "center", "txOffset",
        ])
        let count = try integer(object["generate"], "\(field).generate", in: 1...10_000)
        let uuid = try identity(object, field)
        let major = UInt16(try integer(object["major"], "\(field).major", default: 1, in: 0...65535))
        let firstMinor = try integer(object["firstMinor"], "\(field).firstMinor", default: 1, in: 0...65535)
        guard firstMinor + count - 1 <= 65535 else {
            throw error("\(field).generate", "\(count) beacons from minor \(firstMinor) would pass minor 65535")
        }
        let power = Int8(try integer(object["measuredPower"], "\(field).measuredPower", default: -59, in: -127...(-1)))
        let interval = try number(object["interval"], "\(field).interval", default: 0.1, in: AirScenario.intervals)
        let txOffset = try number(object["txOffset"], "\(field).txOffset", default: 0, in: -60...60)
        guard let ring = object["ring"] as? [Any], ring.count == 2 else {
            throw error("\(field).ring", "expected [minMetres, maxMetres]")
        }
        let inner = try number(ring[0], "\(field).ring[0]", in: 0...10_000)
        let outer = try number(ring[1], "\(field).ring[1]", in: inner...10_000)
        var center = (x: 0.0, y: 0.0)
        if let given = object["center"] {
            guard let pair = given as? [Any], pair.count == 2 else { throw error("\(field).center", "expected [x, y]") }
            center = (try number(pair[0], "\(field).center[0]"), try number(pair[1], "\(field).center[1]"))
        }
        return (0..<count).map { index in
            // Uniform over the ring's area, not its radius.
            let radius = (inner * inner + generator.nextDouble() * (outer * outer - inner * inner)).squareRoot()
            let angle = 2 * Double.pi * generator.nextDouble()
            let frame = IBeacon(uuid: uuid, major: major, minor: UInt16(firstMinor + index), measuredPower: power)
            return AirScenario.Beacon(
                name: frame.identity.description, frame: frame, interval: interval,
                waypoints: [AirScenario.Waypoint(time: 0, x: center.x + radius * cos(angle), y: center.y + radius * sin(angle))],
                txOffset: txOffset)
        }
    }
}
