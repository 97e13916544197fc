/// Reads an accelerometer by polling its sysfs `in_accel_*_raw` attributes at a fixed rate.
///
/// Works with every IIO driver, needs no buffer and no device node, but each sample costs three
/// file reads (and, on I²C chips, three bus transactions): fine up to ~100 Hz.
public struct PolledAccelerometer: Sendable {
    public var device: IIOAccelerometer
    /// Samples per second requested.
    public var rate: Double
    public var orientation: AxisOrientation

    /// The clock samples are timed and paced by; tests give a simulated one.
    let clock: PollClock

    /// `rate` is held in 0.1…10000 Hz (50 Hz when it is not a number).
    public init(device: IIOAccelerometer, rate: Double = 50, orientation: AxisOrientation = .identity) {
        self.init(device: device, rate: rate, orientation: orientation, clock: .monotonic)
    }

    init(device: IIOAccelerometer, rate: Double, orientation: AxisOrientation, clock: PollClock) {
        self.device = device
        self.rate = rate.isNaN ? 50 : min(10_000, max(0.1, rate))
        self.orientation = orientation
        self.clock = clock
    }

    /// One reading now, timed with CLOCK_MONOTONIC.
    public func read() throws(SensorError) -> AccelerationSample {
        let time = clock.now()
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
        let interval = 1 / (rate.isNaN ? 50 : min(10_000, max(0.1, rate)))
        let clock = clock
        return BlockingProducer.stream(name: "nearplay.iio.poll") { stop, emit in
            var next = clock.now()
            var produced = 0
            while !stop.isRequested, produced < (limit ?? .max) {
                emit([try polled.read()])
                produced += 1
                next += interval
                guard clock.sleep(next - clock.now(), stop) else { return }
            }
        }
    }
}

/// Where a polled accelerometer gets the time and waits: CLOCK_MONOTONIC and real sleeps, or a
/// simulated clock in tests, so that pacing can be checked without depending on the scheduler.
struct PollClock: Sendable {
    var now: @Sendable () -> Double
    /// Waits this many seconds (or not at all when not positive); false when stopped.
    var sleep: @Sendable (Double, StopSignal) -> Bool

    static let monotonic = PollClock(now: monotonicSeconds) { seconds, stop in stop.sleep(seconds: seconds) }
}
