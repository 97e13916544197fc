// Prints the sensor figures the issue asks for. Run in release mode:
//
//     swift run -c release SensorsBenchmark
//
// 1. Microphone level path: 16 kHz S16_LE audio → 50 ms RMS/peak windows, in CPU time per second
//    of audio, as × real time. Measured on the meter alone, and end to end through alsa-lib (a
//    `type file` PCM over `null`, the same as the tests use), the capture thread and the async
//    stream.
// 2. Accelerometer buffered decode: `le:s12/16>>4` x/y/z plus a 64-bit timestamp (16-byte scans,
//    as an ADXL345 or LIS3DH writes them) → samples in m/s², in samples per second. Measured on
//    the decoder alone, and end to end through BufferedAccelerometer reading a file of scans.
import Foundation
import struct BeaconFrames.SplitMix64
import Sensors

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func wallSeconds() -> Double { monotonicSeconds() }

func report(_ label: String, _ value: Double, _ unit: String, goal: String) {
    print(String(format: "%-58@ %14.0f %@   (goal %@)", label as NSString, value, unit as NSString, goal as NSString))
}

let sampleRate = 16_000
let audioSeconds = 600.0
/// Deterministic test data (SplitMix64), fast to make.
var generator = SplitMix64(seed: 0x5EED)
let audio: [Int16] = (0..<Int(audioSeconds) * sampleRate).map { index in
    let tone = 8000 * sin(2 * Double.pi * 440 * Double(index) / Double(sampleRate))
    return Int16(clamping: Int(tone) + Int.random(in: -500...500, using: &generator))
}

// 1a. The meter alone.
do {
    var meter = LevelMeter(sampleRate: sampleRate)
    var windows = 0
    let start = cpuSeconds()
    audio.withUnsafeBufferPointer { buffer in
        var offset = 0
        while offset < buffer.count {
            let period = UnsafeBufferPointer(rebasing: buffer[offset..<min(buffer.count, offset + 800)])
            meter.add(period) { _ in windows += 1 }
            offset += 800
        }
    }
    let cpu = cpuSeconds() - start
    precondition(windows == Int(audioSeconds) * 20)
    report("microphone level meter (\(Int(audioSeconds)) s of 16 kHz audio)", audioSeconds / cpu, "× real time", goal: "≥ 200×")
}

// 1b. End to end through ALSA.
do {
    let folder = NSTemporaryDirectory() + "/nearplay-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let seconds = 120
    let bytes = audio.prefix(seconds * sampleRate).withUnsafeBytes { Data($0) }
    try bytes.write(to: URL(fileURLWithPath: folder + "/audio.raw"))
    try """
    pcm.null { type null }
    pcm.bench { type file; slave.pcm "null"; file "/dev/null"; infile "\(folder)/audio.raw"; format "raw" }
    """.write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
    setenv("ALSA_CONFIG_PATH", folder + "/asound.conf", 1)
    var windows = 0
    let start = cpuSeconds()
    let wall = wallSeconds()
    for try await _ in Microphone(pcmName: "bench").levels(frameLimit: seconds * sampleRate) { windows += 1 }
    let cpu = cpuSeconds() - start
    precondition(windows == seconds * 20, "got \(windows) windows")
    report("microphone ALSA capture → levels, end to end (\(seconds) s)", Double(seconds) / cpu, "× real time", goal: "≥ 200×")
    print(String(format: "    (wall clock %.3f s for %d s of audio)", wallSeconds() - wall, seconds))
}

// 2. Accelerometer decode.
let scanCount = 2_000_000
let layout = try ScanLayout(channels: [
    ScanChannel(name: "in_accel_x", index: 0, type: try ScanElementType(parsing: "le:s12/16>>4")),
    ScanChannel(name: "in_accel_y", index: 1, type: try ScanElementType(parsing: "le:s12/16>>4")),
    ScanChannel(name: "in_accel_z", index: 2, type: try ScanElementType(parsing: "le:s12/16>>4")),
    ScanChannel(name: "in_timestamp", index: 3, type: try ScanElementType(parsing: "le:s64/64>>0")),
])
var scans = [UInt8](repeating: 0, count: scanCount * layout.scanBytes)
for index in 0..<scanCount {
    let base = index * layout.scanBytes
    for axis in 0..<3 {
        let value = UInt16(bitPattern: Int16(Int.random(in: -2048...2047, using: &generator) << 4))
        scans[base + axis * 2] = UInt8(value & 0xFF)
        scans[base + axis * 2 + 1] = UInt8(value >> 8)
    }
    withUnsafeBytes(of: Int64(index * 1_250_000).littleEndian) { scans.replaceSubrange((base + 8)..<(base + 16), with: $0) }
}
let decoder = try AccelerationScanDecoder(layout: layout, scale: [0.0383, 0.0383, 0.0383], offset: [0, 0, 0])

do {
    var samples: [AccelerationSample] = []
    samples.reserveCapacity(scanCount)
    let start = cpuSeconds()
    scans.withUnsafeBytes { buffer in
        var offset = 0
        let chunk = 256 * layout.scanBytes
        while offset < buffer.count {
            let end = min(buffer.count, offset + chunk)
            offset += decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[offset..<end]), into: &samples)
        }
    }
    let cpu = cpuSeconds() - start
    precondition(samples.count == scanCount)
    report("accelerometer scan decode (\(scanCount) scans)", Double(scanCount) / cpu, "samples/s", goal: "≥ 1,000,000")
}

do {
    let folder = NSTemporaryDirectory() + "/nearplay-bench-iio-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let device = folder + "/sys/iio:device0"
    try FileManager.default.createDirectory(atPath: device + "/scan_elements", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: device + "/buffer", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/dev", withIntermediateDirectories: true)
    let attributes = [
        "name": "adxl345", "in_accel_x_raw": "0", "in_accel_y_raw": "0", "in_accel_z_raw": "0", "in_accel_scale": "0.038300",
        "buffer/enable": "0", "buffer/length": "0",
    ]
    for (file, text) in attributes { try text.write(toFile: device + "/" + file, atomically: false, encoding: .utf8) }
    for (index, channel) in ["in_accel_x", "in_accel_y", "in_accel_z", "in_timestamp"].enumerated() {
        try "0".write(toFile: "\(device)/scan_elements/\(channel)_en", atomically: false, encoding: .utf8)
        try "\(index)".write(toFile: "\(device)/scan_elements/\(channel)_index", atomically: false, encoding: .utf8)
        try (index == 3 ? "le:s64/64>>0" : "le:s12/16>>4").write(toFile: "\(device)/scan_elements/\(channel)_type", atomically: false, encoding: .utf8)
    }
    try Data(scans).write(to: URL(fileURLWithPath: folder + "/dev/iio:device0"))
    let accelerometer = try IIODeviceTree(root: folder + "/sys", deviceDirectory: folder + "/dev").accelerometer()
    var count = 0
    let start = cpuSeconds()
    for try await _ in BufferedAccelerometer(device: accelerometer, bufferLength: 1024).samples() { count += 1 }
    let cpu = cpuSeconds() - start
    precondition(count == scanCount, "got \(count)")
    report("accelerometer buffered capture from a file, end to end", Double(count) / cpu, "samples/s", goal: "≥ 1,000,000")
}
