/// The received power at 1 m a beacon advertises, in dBm: iBeacon's and AltBeacon's "measured
/// power", Eddystone's Tx power at 0 m less ``Eddystone/oneMetreLoss``. Frames carry it as a
/// signed byte (``frameRange``); reports and the ranging maths carry it as a number, so one type
/// holds both. Encoded as that number, and written as one (`-59`) where a constant is meant.
public struct MeasuredPower: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByIntegerLiteral {
    /// dBm at 1 m.
    public var rawValue: Double
    public init(rawValue: Double) { self.rawValue = rawValue }
    public init(dBm: Double) { rawValue = dBm }
    /// As a frame carries it.
    public init(_ frameByte: Int8) { rawValue = Double(frameByte) }
    public init(integerLiteral dBm: Int) { rawValue = Double(dBm) }

    /// dBm at 1 m.
    public var dBm: Double { rawValue }

    /// The values a frame's signed byte can carry.
    public static let frameRange: ClosedRange<Double> = -128...127
}
