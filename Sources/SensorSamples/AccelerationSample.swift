/// Standard gravity in m/s², the size of one g.
public let standardGravity = 9.80665

/// One accelerometer reading, already scaled and turned to the device's mounting orientation.
public struct AccelerationSample: Hashable, Codable, Sendable {
    /// Seconds: the IIO timestamp channel when capturing buffered, CLOCK_MONOTONIC otherwise, or
    /// the time in the recording a sample came from.
    public var time: Double
    /// Acceleration in m/s² along the device's axes; at rest, gravity reads about 9.81 on the axis
    /// pointing up.
    public var x: Double
    public var y: Double
    public var z: Double

    public init(time: Double, x: Double, y: Double, z: Double) {
        self.time = time
        self.x = x
        self.y = y
        self.z = z
    }

    /// Length of the acceleration vector in m/s².
    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    /// The same reading in g (units of ``standardGravity``).
    public var inGravities: (x: Double, y: Double, z: Double) {
        (x / standardGravity, y / standardGravity, z / standardGravity)
    }

    enum CodingKeys: String, CodingKey {
        case time = "t", x, y, z
    }
}
