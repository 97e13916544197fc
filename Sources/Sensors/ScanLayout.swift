/// One enabled channel of an IIO buffer: its sysfs name (e.g. `in_accel_x`), its
/// `scan_elements/<name>_index` and its ``ScanElementType``.
public struct ScanChannel: Equatable, Hashable, Sendable {
    public var name: String
    public var index: Int
    public var type: ScanElementType

    public init(name: String, index: Int, type: ScanElementType) {
        self.name = name
        self.index = index
        self.type = type
    }
}

/// Where each enabled channel sits in one scan (one record read from `/dev/iio:deviceN`).
///
/// Channels appear in `_index` order. Each starts at a multiple of its own size (storage bytes
/// times repeat count), and the scan is padded to a multiple of the largest channel, exactly as
/// the kernel's `iio_compute_scan_bytes` lays them out (its `ALIGN` assumes power-of-two sizes;
/// odd repeat counts get the same arithmetic here so the offsets match what the kernel wrote).
public struct ScanLayout: Equatable, Sendable {
    /// Enabled channels in scan order.
    public let channels: [ScanChannel]
    /// Byte offset of each channel in `channels`, same order.
    public let offsets: [Int]
    /// Bytes per scan.
    public let scanBytes: Int

    public enum LayoutError: Error, Equatable, Sendable, CustomStringConvertible {
        case noChannels
        case duplicateIndex(Int, String, String)

        public var description: String {
            switch self {
            case .noChannels: "no scan element is enabled"
            case .duplicateIndex(let index, let first, let second): "\(first) and \(second) share scan index \(index)"
            }
        }
    }

    public init(channels unordered: [ScanChannel]) throws(LayoutError) {
        guard !unordered.isEmpty else { throw .noChannels }
        let ordered = unordered.sorted { $0.index < $1.index }
        for (first, second) in zip(ordered, ordered.dropFirst()) where first.index == second.index {
            throw .duplicateIndex(first.index, first.name, second.name)
        }
        var offsets: [Int] = []
        var bytes = 0
        var largest = 1
        for channel in ordered {
            let length = channel.type.elementBytes
            bytes = Self.kernelAlign(bytes, length)
            offsets.append(bytes)
            bytes += length
            largest = max(largest, length)
        }
        self.channels = ordered
        self.offsets = offsets
        self.scanBytes = Self.kernelAlign(bytes, largest)
    }

    /// The kernel's `ALIGN(x, a)`: `(x + a - 1) & ~(a - 1)`.
    static func kernelAlign(_ value: Int, _ alignment: Int) -> Int {
        (value + alignment - 1) & ~(alignment - 1)
    }

    /// The position of the channel called `name` in ``channels``.
    public func position(of name: String) -> Int? {
        channels.firstIndex { $0.name == name }
    }

    /// Decodes the raw (unscaled) value of channel `position` in the scan that starts at
    /// `scanStart` in `buffer`; nil when the buffer is too short for that scan.
    public func rawValue(in buffer: UnsafeRawBufferPointer, scanStart: Int, position: Int, repeatIndex: Int = 0) -> Int64? {
        guard position >= 0, position < channels.count, scanStart >= 0,
              scanStart <= buffer.count - scanBytes,
              repeatIndex >= 0, repeatIndex < channels[position].type.repeatCount
        else { return nil }
        return channels[position].type.decode(buffer, at: scanStart + offsets[position], repeatIndex: repeatIndex)
    }

    /// Decodes every value of every complete scan in `bytes`, one array per scan in channel
    /// order (repeats flattened). Trailing bytes short of a whole scan are ignored.
    public func decodeAll(_ bytes: [UInt8]) -> [[Int64]] {
        bytes.withUnsafeBytes { buffer in
            var scans: [[Int64]] = []
            var start = 0
            while start + scanBytes <= buffer.count {
                var values: [Int64] = []
                for (position, channel) in channels.enumerated() {
                    for repeatIndex in 0..<channel.type.repeatCount {
                        values.append(channel.type.decode(buffer, at: start + offsets[position], repeatIndex: repeatIndex))
                    }
                }
                scans.append(values)
                start += scanBytes
            }
            return scans
        }
    }
}
