import Foundation

/// A fresh folder under the system temp folder, removed when the value goes away. Every test
/// makes its own, so tests can run in parallel.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "test") {
        var template = Array((NSTemporaryDirectory() + "/nearplay-sensors-\(label)-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed: \(errno)")
        path = String(cString: created!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `relative`, creating folders.
    func write(_ text: String, to relative: String) throws {
        let url = URL(fileURLWithPath: path + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    func write(_ bytes: [UInt8], to relative: String) throws {
        let url = URL(fileURLWithPath: path + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    func read(_ relative: String) throws -> String {
        try String(contentsOfFile: path + "/" + relative, encoding: .utf8)
    }
}

/// Headerless S16_LE bytes of a sine.
func sineBytes(frequency: Double, amplitude: Double, sampleRate: Int = 16_000, seconds: Double) -> [UInt8] {
    let count = Int(Double(sampleRate) * seconds)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count * 2)
    for index in 0..<count {
        let value = Int16((amplitude * sin(2 * .pi * frequency * Double(index) / Double(sampleRate))).rounded())
        let word = UInt16(bitPattern: value)
        bytes.append(UInt8(word & 0xFF))
        bytes.append(UInt8(word >> 8))
    }
    return bytes
}
