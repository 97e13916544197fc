import Foundation
import Sensors
import Synchronization

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

/// Runs `onInterrupt` when the user presses Ctrl-C (SIGINT) or the process gets SIGTERM, for as
/// long as the handler lives. A second one exits at once (status 130), so a command stuck in
/// its cleanup can still be killed from the keyboard.
final class InterruptHandler {
    private let sources: [any DispatchSourceSignal]
    private let signals: [Int32]
    /// What a signal does; tests call it directly (a test must not send itself SIGINT).
    let action: InterruptAction

    /// `signals` and `exit` are for tests.
    init(signals: [Int32] = [SIGINT, SIGTERM], exit: @escaping @Sendable () -> Void = { _exit(130) },
         _ onInterrupt: @escaping @Sendable () -> Void) {
        let action = InterruptAction(onInterrupt: onInterrupt, exit: exit)
        self.action = action
        self.signals = signals
        sources = signals.map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { action.fire() }
            source.resume()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
        signals.forEach { signal($0, SIG_DFL) }
    }
}

/// The first interrupt runs `onInterrupt`; any later one runs `exit`.
final class InterruptAction: Sendable {
    private let count = Atomic<Int>(0)
    private let onInterrupt: @Sendable () -> Void
    private let exit: @Sendable () -> Void

    init(onInterrupt: @escaping @Sendable () -> Void, exit: @escaping @Sendable () -> Void) {
        self.onInterrupt = onInterrupt
        self.exit = exit
    }

    func fire() {
        if count.add(1, ordering: .relaxed).newValue > 1 { return exit() }
        onInterrupt()
    }
}
