import Glibc
import Logging

/// Reads an accelerometer through the IIO buffer: enables the x, y, z (and timestamp) scan
/// elements, sets `buffer/length`, enables `buffer/enable`, and reads whole scans from the device
/// node (`/dev/iio:deviceN`; any file or FIFO of scans works the same).
///
/// The driver needs a trigger or a hardware FIFO for the buffer to fill; set it up as
/// hardware-notes.md shows. Disables the buffer again when the stream ends.
public struct BufferedAccelerometer: Sendable {
    public var device: IIOAccelerometer
    public var orientation: AxisOrientation
    /// Scans the kernel buffer holds (`buffer/length`).
    public var bufferLength: Int
    /// Written to `sampling_frequency` before enabling, when set.
    public var samplingFrequency: Double?

    private static let logger = Logger(label: "nearplay.sensors.iio")

    public init(device: IIOAccelerometer, orientation: AxisOrientation = .identity, bufferLength: Int = 256, samplingFrequency: Double? = nil) {
        self.device = device
        self.orientation = orientation
        self.bufferLength = bufferLength
        self.samplingFrequency = samplingFrequency
    }

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

    private func run(stop: StopSignal, emit: ([AccelerationSample]) -> Void) throws(SensorError) {
        let layout = try configureScanElements()
        let decoder = try AccelerationScanDecoder(device: device, layout: layout, orientation: orientation)
        try Sysfs.write(String(bufferLength), to: device.attribute("buffer/length"))
        if let samplingFrequency {
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
        let fd = try SystemCall.open(device.devicePath, O_RDONLY | O_NONBLOCK)
        defer { SystemCall.close(fd) }
        Self.logger.debug("buffered capture from \(device.devicePath), \(layout.scanBytes) bytes per scan")

        let period = 1 / (samplingFrequency ?? device.samplingFrequency ?? 100)
        var pending = [UInt8](repeating: 0, count: max(1, bufferLength) * layout.scanBytes)
        var filled = 0
        while !stop.isRequested {
            guard try SystemCall.waitReadable(fd, timeoutMilliseconds: 100, path: device.devicePath) else { continue }
            let n = try SystemCall.read(fd, into: &pending, from: filled, path: device.devicePath)
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
