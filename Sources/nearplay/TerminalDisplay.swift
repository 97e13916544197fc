import Foundation
import Sensors

/// Small helpers for the live terminal views.
enum TerminalDisplay {
    /// A bar `width` characters wide, filled in proportion to `fraction` (0...1).
    static func bar(_ fraction: Double, width: Int = 30) -> String {
        let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
    }

    /// A level meter from −60 to 0 dBFS.
    static func levelMeter(_ level: LevelSample) -> String {
        bar((level.rmsDBFS + 60) / 60) + String(format: " %6.1f dBFS rms %6.1f peak", level.rmsDBFS, level.peakDBFS)
    }

    static func axes(_ sample: AccelerationSample) -> String {
        let g = sample.inGravities
        return String(format: "x %+6.2f  y %+6.2f  z %+6.2f g  |a| %5.2f g", g.x, g.y, g.z, sample.magnitude / standardGravity)
    }

    /// Rewrites the current terminal line; nothing when standard error is not a terminal.
    static func status(_ text: String) {
        guard isatty(STDERR_FILENO) != 0 else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + text).utf8))
    }

    static func line(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// One JSON object per line on standard output.
    static func json<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
