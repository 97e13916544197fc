import Foundation
import Minigames
import Rounds
import Sensors
import Synchronization
import TestSupport

/// The rounds' fixtures in a test's temporary folder.
extension TemporaryFolder {
    /// Writes headerless S16_LE audio to `name` and returns its path.
    func writeAudio(_ samples: [Int16], to name: String) throws -> String {
        try write(samples.map(\.littleEndian).withUnsafeBytes { Array($0) }, to: name)
    }

    /// Writes accelerometer samples as `nearplay sensors --json` does and returns the path.
    func writeAccelerations(_ samples: [AccelerationSample], to name: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let lines = try samples.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        return try write(lines.joined(separator: "\n") + "\n", to: name)
    }

    /// A calibration file path that does not exist (an uncalibrated device).
    var noCalibration: String { path + "/no-calibration.json" }
}

/// The repository's root folder, found from this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// What a recorded round should hold: the samples up to `duration`, times from the first one.
func expectedRound<Sample>(_ samples: [Sample], duration: Double, time: WritableKeyPath<Sample, Double>) -> [Sample] {
    guard let first = samples.first?[keyPath: time] else { return [] }
    var moved: [Sample] = []
    for sample in samples {
        var copy = sample
        copy[keyPath: time] -= first
        if copy[keyPath: time] > duration { break }
        moved.append(copy)
    }
    return moved
}

/// Reports collected from a round's progress callback.
final class ProgressLog: Sendable {
    private let reports = Mutex<[RoundProgress]>([])

    func note(_ report: RoundProgress) { reports.withLock { $0.append(report) } }

    var all: [RoundProgress] { reports.withLock { $0 } }
}
