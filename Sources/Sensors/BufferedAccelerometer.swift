import Glibc
import Logging
import SystemSupport

/// Reads an accelerometer through the IIO buffer: enables the x, y, z (and timestamp) scan
/// elements, sets `buffer/length`, enables `buffer/enable`, and reads whole scans from the device
/// node (`/dev/iio:deviceN`; any file or FIFO of scans works the same).
///
/// The driver needs a trigger or a hardware FIFO for the buffer to fill; set it up as
/// hardware-notes.md shows. When the stream ends it disables the buffer again and puts every
/// scan element's `_en` back as it found it (other programs may use the gyroscope channels).
public struct BufferedAccelerometer: Sendable {
    public var device: IIOAccelerometer
    public var orientation: AxisOrientation
    /// Scans the kernel buffer holds (`buffer/length`), 1…65536.
    public var bufferLength: Int
    /// Written to `sampling_frequency` before enabling, when set (a positive finite number).
    public var samplingFrequency: Double?

    private static let logger = Logger(label: "nearplay.sensors.iio")

    public init(device: IIOAccelerometer, orientation: AxisOrientation = .identity, bufferLength: Int = 256, samplingFrequency: Double? = nil) {
        self.device = device
        self.orientation = orientation
        self.bufferLength = Self.clamped(bufferLength)
        self.samplingFrequency = samplingFrequency.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }

    static let maximumBufferLength = 65_536

    private static func clamped(_ length: Int) -> Int { min(maximumBufferLength, max(1, length)) }

    private var scanElements: String { device.attribute("scan_elements") }

    /// Enables the channels we need, disables the others, and reads back the scan layout.
    public func configureScanElements() throws(SensorError) -> ScanLayout {
        guard device.supportsBuffer else {
            throw .unsupported(device: device.sysfsPath, reason: "it has no scan_elements or buffer/enable; use polled mode")
        }
        try setBuffer(enabled: false)
        let wanted: Set<String> = ["in_accel_x", "in_accel_y", "in_accel_z", "in_timestamp"]
        var channels: [ScanChannel] = []
        for file in Sysfs.list(scanElements) where file.hasSuffix("_en") {
            let channel = String(file.dropLast(3))
            let enable = wanted.contains(channel)
            let path = scanElements + "/" + file
            if try Sysfs.integer(path) != (enable ? 1 : 0) {
                try Sysfs.write(enable ? "1" : "0", to: path)
            }
            guard enable else { continue }
            channels.append(try readChannel(channel))
        }
        do {
            return try ScanLayout(channels: channels)
        } catch {
            throw .malformedAttribute(path: scanElements, text: channels.map(\.name).joined(separator: " "), reason: error.description)
        }
    }

    private func readChannel(_ name: String) throws(SensorError) -> ScanChannel {
        let typePath = "\(scanElements)/\(name)_type"
        let typeText = try Sysfs.readText(typePath)
        let type: ScanElementType
        do {
            type = try ScanElementType(parsing: typeText)
        } catch {
            throw .malformedAttribute(path: typePath, text: typeText, reason: error.description)
        }
        let index = try Sysfs.integer("\(scanElements)/\(name)_index")
        return ScanChannel(name: name, index: index, type: type)
    }

    private func setBuffer(enabled: Bool) throws(SensorError) {
        let path = device.attribute("buffer/enable")
        if try Sysfs.integer(path) != (enabled ? 1 : 0) {
            try Sysfs.write(enabled ? "1" : "0", to: path)
        }
    }

    /// Samples as the device produces them, until the consumer stops iterating or the device
    /// node reaches end of file.
    public func samples() -> SensorStream<AccelerationSample> {
        let capture = self
        return BlockingProducer.stream(name: "nearplay.iio.buffer") { stop, emit in
            try capture.run(stop: stop, emit: emit)
        }
    }

    /// Throws a clear error when the device has a trigger slot and nothing in it: enabling the
    /// buffer would fail with a bare EINVAL.
    func checkTrigger() throws(SensorError) {
        let path = device.attribute("trigger/current_trigger")
        guard Sysfs.exists(path) else { return }
        let trigger = try Sysfs.readText(path).trimming(" \t")
        guard trigger.isEmpty else { return }
        throw .unsupported(device: device.sysfsPath,
                           reason: "no trigger set in \(path), so its buffer cannot be enabled: set the device's data-ready trigger or an hrtimer as hardware-notes.md shows")
    }

    /// The current text of every scan element's `_en`, to put back afterwards.
    private func savedEnables() -> [(path: String, text: String)] {
        Sysfs.list(scanElements).filter { $0.hasSuffix("_en") }.compactMap { file in
            let path = scanElements + "/" + file
            return (try? Sysfs.readText(path)).map { (path, $0.trimming(" \t")) }
        }
    }

    private func restore(_ enables: [(path: String, text: String)]) {
        for (path, text) in enables where (try? Sysfs.readText(path).trimming(" \t")) != text {
            do { try Sysfs.write(text, to: path) } catch {
                Self.logger.warning("could not restore \(path) to \(text): \(error)")
            }
        }
    }

    private func run(stop: StopSignal, emit: ([AccelerationSample]) -> Void) throws(SensorError) {
        guard device.supportsBuffer else {
            throw .unsupported(device: device.sysfsPath, reason: "it has no scan_elements or buffer/enable; use polled mode")
        }
        try checkTrigger()
        let enables = savedEnables()
        // Runs after the buffer is disabled below: the kernel refuses scan element changes while it is on.
        defer { restore(enables) }
        let layout = try configureScanElements()
        let decoder = try AccelerationScanDecoder(device: device, layout: layout, orientation: orientation)
        let bufferLength = Self.clamped(bufferLength)
        try Sysfs.write(String(bufferLength), to: device.attribute("buffer/length"))
        if let samplingFrequency, samplingFrequency > 0, samplingFrequency.isFinite {
            let path = device.attribute(Sysfs.exists(device.attribute("in_accel_sampling_frequency"))
                ? "in_accel_sampling_frequency" : "sampling_frequency")
            try Sysfs.write(String(samplingFrequency), to: path)
        }
        try setBuffer(enabled: true)
        defer {
            do { try setBuffer(enabled: false) } catch {
                Self.logger.warning("could not disable the IIO buffer: \(error)")
            }
        }
        let fd = try SensorError.catching(try SystemCall.open(device.devicePath, O_RDONLY | O_NONBLOCK))
        defer { SystemCall.close(fd) }
        Self.logger.debug("buffered capture from \(device.devicePath), \(layout.scanBytes) bytes per scan")

        let rate = samplingFrequency ?? device.samplingFrequency ?? 100
        let period = 1 / (rate > 0 && rate.isFinite ? rate : 100)
        var pending = [UInt8](repeating: 0, count: bufferLength * layout.scanBytes)
        var filled = 0
        while !stop.isRequested {
            guard try SensorError.catching(try SystemCall.waitReadable(fd, timeoutMilliseconds: 100, path: device.devicePath)) else { continue }
            let n = try SensorError.catching(try SystemCall.read(fd, into: &pending, from: filled, path: device.devicePath))
            if n == 0 { return }
            if n < 0 { continue }
            filled += n
            let now = monotonicSeconds()
            let scans = filled / layout.scanBytes
            var samples: [AccelerationSample] = []
            let used = pending.withUnsafeBytes { buffer in
                decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]), into: &samples) { scan in
                    now - Double(scans - 1 - scan) * period
                }
            }
            emit(samples)
            if used > 0 {
                pending.replaceSubrange(0..<(filled - used), with: pending[used..<filled])
                filled -= used
            }
        }
    }
}
