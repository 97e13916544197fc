/// Turns buffered IIO scans into ``AccelerationSample``s: raw values through the device's scale
/// and offset into m/s², turned to the mounting orientation, timed by the timestamp channel.
/// Pure: the buffered capture and the benchmark both feed it bytes.
public struct AccelerationScanDecoder: Sendable {
    public let layout: ScanLayout
    public let scale: [Double]
    public let offset: [Double]
    public let orientation: AxisOrientation
    private let xPosition: Int
    private let yPosition: Int
    private let zPosition: Int
    /// Position of `in_timestamp` (nanoseconds) in the scan, if enabled.
    private let timestampPosition: Int?

    public init(layout: ScanLayout, scale: [Double], offset: [Double], orientation: AxisOrientation = .identity) throws(SensorError) {
        guard let x = layout.position(of: "in_accel_x"), let y = layout.position(of: "in_accel_y"),
              let z = layout.position(of: "in_accel_z")
        else {
            throw .unsupported(device: "the scan", reason: "in_accel_x, in_accel_y and in_accel_z must all be enabled")
        }
        guard scale.count == 3, offset.count == 3 else {
            throw .unsupported(device: "the scan", reason: "three scales and offsets are needed")
        }
        self.layout = layout
        self.scale = scale
        self.offset = offset
        self.orientation = orientation
        self.xPosition = x
        self.yPosition = y
        self.zPosition = z
        self.timestampPosition = layout.position(of: "in_timestamp")
    }

    public init(device: IIOAccelerometer, layout: ScanLayout, orientation: AxisOrientation = .identity) throws(SensorError) {
        try self.init(layout: layout, scale: device.scale, offset: device.offset, orientation: orientation)
    }

    /// Whether samples get their time from the scan's timestamp channel.
    public var hasTimestamp: Bool { timestampPosition != nil }

    /// Decodes every whole scan in `buffer` and appends the samples; returns the number of bytes
    /// used (a multiple of the scan size; the rest is a partial scan to keep for the next read).
    ///
    /// `time(i)` gives the time of scan `i` when there is no timestamp channel.
    @discardableResult
    public func decode(
        _ buffer: UnsafeRawBufferPointer,
        into samples: inout [AccelerationSample],
        time: (Int) -> Double = { _ in 0 }
    ) -> Int {
        let scanBytes = layout.scanBytes
        let scans = buffer.count / scanBytes
        let channels = layout.channels
        let offsets = layout.offsets
        samples.reserveCapacity(samples.count + scans)
        for scan in 0..<scans {
            let start = scan * scanBytes
            let rawX = channels[xPosition].type.decode(buffer, at: start + offsets[xPosition])
            let rawY = channels[yPosition].type.decode(buffer, at: start + offsets[yPosition])
            let rawZ = channels[zPosition].type.decode(buffer, at: start + offsets[zPosition])
            let seconds: Double
            if let timestampPosition {
                seconds = Double(channels[timestampPosition].type.decode(buffer, at: start + offsets[timestampPosition])) / 1e9
            } else {
                seconds = time(scan)
            }
            let chip = ((Double(rawX) + offset[0]) * scale[0],
                        (Double(rawY) + offset[1]) * scale[1],
                        (Double(rawZ) + offset[2]) * scale[2])
            let turned = orientation.apply(chip)
            samples.append(AccelerationSample(time: seconds, x: turned.x, y: turned.y, z: turned.z))
        }
        return scans * scanBytes
    }
}
