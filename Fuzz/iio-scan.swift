// Fuzz target: IIO buffered scans: the scan_elements a driver describes (one channel a line,
// "name index type", e.g. "in_accel_x 0 le:s16/16>>0"), then the raw scan bytes it delivers,
// after the first zero byte.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIOScan(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let description = String(decoding: bytes[..<split], as: UTF8.self)
    let scans = split < bytes.count ? Array(bytes[(split + 1)...]) : []
    var channels: [ScanChannel] = []
    for line in description.split(separator: "\n") {
        let parts = line.split(separator: " ")
        guard parts.count == 3, let index = Int(parts[1]),
              let type = try? ScanElementType(parsing: String(parts[2])) else { continue }
        channels.append(ScanChannel(name: String(parts[0]), index: index, type: type))
    }
    guard let layout = try? ScanLayout(channels: channels) else { return 0 }
    _ = layout.decodeAll(scans)
    scans.withUnsafeBytes { buffer in
        for position in layout.channels.indices {
            _ = layout.rawValue(in: buffer, scanStart: 0, position: position)
        }
    }
    return 0
}
