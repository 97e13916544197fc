/// How the accelerometer chip is mounted: which chip axis, with which sign, is the device's x,
/// y and z.
///
/// Written as three comma-separated axes, e.g. `x,y,z` (as mounted) or `-y,x,z` (chip turned
/// 90° about z).
public struct AxisOrientation: Equatable, Codable, Sendable, CustomStringConvertible {
    /// A chip axis with a sign.
    public struct SignedAxis: Equatable, Codable, Sendable {
        /// 0 for x, 1 for y, 2 for z.
        public var axis: Int
        public var negated: Bool
    }

    public var x: SignedAxis
    public var y: SignedAxis
    public var z: SignedAxis

    public static let identity = AxisOrientation(
        x: SignedAxis(axis: 0, negated: false),
        y: SignedAxis(axis: 1, negated: false),
        z: SignedAxis(axis: 2, negated: false)
    )

    public init(x: SignedAxis, y: SignedAxis, z: SignedAxis) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// Parses `x,y,z`-style text; each chip axis must appear exactly once.
    public init?(_ text: String) {
        let parts = text.split(separator: ",").map { $0.trimming(" ") }
        guard parts.count == 3 else { return nil }
        var axes: [SignedAxis] = []
        for part in parts {
            let negated = part.hasPrefix("-")
            let name = negated || part.hasPrefix("+") ? part.dropFirst() : Substring(part)
            guard let axis = ["x", "y", "z"].firstIndex(of: name.lowercased()) else { return nil }
            axes.append(SignedAxis(axis: axis, negated: negated))
        }
        guard Set(axes.map(\.axis)).count == 3 else { return nil }
        self.init(x: axes[0], y: axes[1], z: axes[2])
    }

    public var description: String {
        [x, y, z].map { ($0.negated ? "-" : "") + ["x", "y", "z"][$0.axis] }.joined(separator: ",")
    }

    /// Turns chip-axis values into device-axis values.
    @inline(__always)
    public func apply(_ chip: (Double, Double, Double)) -> (x: Double, y: Double, z: Double) {
        func pick(_ signed: SignedAxis) -> Double {
            let value = signed.axis == 0 ? chip.0 : signed.axis == 1 ? chip.1 : chip.2
            return signed.negated ? -value : value
        }
        return (pick(x), pick(y), pick(z))
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters from `set`.
    func trimming(_ set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
