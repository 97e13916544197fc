/// An IIO accelerometer found under the IIO sysfs root: a device whose channels include
/// `in_accel_x`, `in_accel_y` and `in_accel_z`.
public struct IIOAccelerometer: Equatable, Sendable {
    /// The device's directory name, e.g. `iio:device0`.
    public var id: String
    /// The driver's name for the chip (the `name` attribute), e.g. `adxl345`.
    public var chipName: String
    /// The device's sysfs directory.
    public var sysfsPath: String
    /// The character device buffered capture reads, e.g. `/dev/iio:device0`.
    public var devicePath: String
    /// m/s² per raw unit for x, y and z (`in_accel_x_scale` or the shared `in_accel_scale`).
    public var scale: [Double]
    /// Raw units added before scaling, for x, y and z (0 where the driver has no `_offset`).
    public var offset: [Double]
    /// Current `sampling_frequency` in Hz, when the driver has one.
    public var samplingFrequency: Double?
    /// Rates `sampling_frequency_available` lists.
    public var availableFrequencies: [Double]
    /// Whether the device has `scan_elements` and a `buffer`, so buffered capture can work.
    public var supportsBuffer: Bool

    static let axes = ["x", "y", "z"]

    /// Path of an attribute of this device.
    func attribute(_ name: String) -> String { sysfsPath + "/" + name }

    /// Scales raw chip values to m/s².
    @inline(__always)
    func convert(rawX: Int64, rawY: Int64, rawZ: Int64) -> (Double, Double, Double) {
        ((Double(rawX) + offset[0]) * scale[0],
         (Double(rawY) + offset[1]) * scale[1],
         (Double(rawZ) + offset[2]) * scale[2])
    }
}

/// The IIO devices of a system, under a sysfs root that tests point at a temporary folder.
public struct IIODeviceTree: Sendable {
    /// Normally `/sys/bus/iio/devices`.
    public var root: String
    /// Where the device nodes are, normally `/dev`.
    public var deviceDirectory: String

    public static let systemRoot = "/sys/bus/iio/devices"

    public init(root: String = IIODeviceTree.systemRoot, deviceDirectory: String = "/dev") {
        self.root = root
        self.deviceDirectory = deviceDirectory
    }

    /// Every accelerometer under the root, sorted by id. Throws when an accelerometer has an
    /// attribute that cannot be read or parsed; returns an empty list when there is none.
    public func accelerometers() throws(SensorError) -> [IIOAccelerometer] {
        var found: [IIOAccelerometer] = []
        for entry in Sysfs.list(root) {
            let path = root + "/" + entry
            guard isAccelerometer(path) else { continue }
            found.append(try describe(id: entry, path: path))
        }
        return found
    }

    /// The accelerometer with this id (`iio:device0`) or chip name (`adxl345`); the first one
    /// when `name` is nil.
    public func accelerometer(named name: String? = nil) throws(SensorError) -> IIOAccelerometer {
        let all = try accelerometers()
        guard let name else {
            guard let first = all.first else { throw .noAccelerometer(root: root) }
            return first
        }
        guard let match = all.first(where: { $0.id == name || $0.chipName == name }) else {
            throw .accelerometerNotFound(name: name, root: root)
        }
        return match
    }

    private func isAccelerometer(_ path: String) -> Bool {
        IIOAccelerometer.axes.allSatisfy { axis in
            Sysfs.exists("\(path)/in_accel_\(axis)_raw") || Sysfs.exists("\(path)/scan_elements/in_accel_\(axis)_en")
        }
    }

    private func describe(id: String, path: String) throws(SensorError) -> IIOAccelerometer {
        let chipName = Sysfs.exists(path + "/name") ? try Sysfs.readText(path + "/name") : id
        var scale: [Double] = []
        var offset: [Double] = []
        for axis in IIOAccelerometer.axes {
            guard let axisScale = try perChannelOrShared(path, axis: axis, suffix: "scale") else {
                throw .missingAttribute(path: "\(path)/in_accel_scale")
            }
            scale.append(axisScale)
            offset.append(try perChannelOrShared(path, axis: axis, suffix: "offset") ?? 0)
        }
        let frequencyPath = firstExisting(["\(path)/in_accel_sampling_frequency", "\(path)/sampling_frequency"])
        let availablePath = firstExisting([
            "\(path)/in_accel_sampling_frequency_available", "\(path)/sampling_frequency_available",
        ])
        var samplingFrequency: Double?
        if let frequencyPath { samplingFrequency = try Sysfs.number(frequencyPath) }
        var availableFrequencies: [Double] = []
        if let availablePath { availableFrequencies = try Sysfs.numberList(availablePath) }
        return IIOAccelerometer(
            id: id,
            chipName: chipName,
            sysfsPath: path,
            devicePath: deviceDirectory + "/" + id,
            scale: scale,
            offset: offset,
            samplingFrequency: samplingFrequency,
            availableFrequencies: availableFrequencies,
            supportsBuffer: Sysfs.exists(path + "/scan_elements") && Sysfs.exists(path + "/buffer/enable")
        )
    }

    /// `in_accel_<axis>_<suffix>` if present, else the shared `in_accel_<suffix>`, else nil.
    private func perChannelOrShared(_ path: String, axis: String, suffix: String) throws(SensorError) -> Double? {
        guard let file = firstExisting(["\(path)/in_accel_\(axis)_\(suffix)", "\(path)/in_accel_\(suffix)"]) else {
            return nil
        }
        return try Sysfs.number(file)
    }

    private func firstExisting(_ paths: [String]) -> String? {
        paths.first(where: Sysfs.exists)
    }
}
