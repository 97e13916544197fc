/// Reads an accelerometer by polling its sysfs `in_accel_*_raw` attributes at a fixed rate.
///
/// Works with every IIO driver, needs no buffer and no device node, but each sample costs three
/// file reads (and, on I²C chips, three bus transactions): fine up to ~100 Hz.
public struct PolledAccelerometer: Sendable {
    public var device: IIOAccelerometer
    /// Samples per second requested.
    public var rate: Double
    public var orientation: AxisOrientation

    public init(device: IIOAccelerometer, rate: Double = 50, orientation: AxisOrientation = .identity) {
        self.device = device
        self.rate = rate
        self.orientation = orientation
    }

    /// One reading now, timed with CLOCK_MONOTONIC.
    public func read() throws(SensorError) -> AccelerationSample {
        let time = monotonicSeconds()
        let x = try Sysfs.integer(device.attribute("in_accel_x_raw"))
        let y = try Sysfs.integer(device.attribute("in_accel_y_raw"))
        let z = try Sysfs.integer(device.attribute("in_accel_z_raw"))
        let turned = orientation.apply(device.convert(rawX: Int64(x), rawY: Int64(y), rawZ: Int64(z)))
        return AccelerationSample(time: time, x: turned.x, y: turned.y, z: turned.z)
    }

    /// Readings at ``rate`` until the consumer stops iterating (or `limit` samples). Reads run on
    /// a thread of their own.
    public func samples(limit: Int? = nil) -> SensorStream<AccelerationSample> {
        let polled = self
        let interval = 1 / max(0.1, min(rate, 10_000))
        return BlockingProducer.stream(name: "nearplay.iio.poll") { stop, emit in
            var next = monotonicSeconds()
            var produced = 0
            while !stop.isRequested, produced < (limit ?? .max) {
                emit([try polled.read()])
                produced += 1
                next += interval
                guard stop.sleep(seconds: next - monotonicSeconds()) else { return }
            }
        }
    }
}
