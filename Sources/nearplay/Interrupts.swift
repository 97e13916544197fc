import Foundation
import Synchronization

/// Runs `work` until it finishes or SIGINT/SIGTERM arrives, and returns what it returns. The first
/// signal cancels `work`; this returns once `work` has wound down (discovery stopped, advertisement
/// unregistered, devices restored), so the exit status is what `work` made it. A second signal
/// exits at once (``InterruptHandler``).
///
/// Every command that stops on Ctrl-C goes through here, so they all stop the same way.
func runUntilInterrupted<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let task = Task { try await work() }
    let interrupt = InterruptHandler { task.cancel() }
    defer { withExtendedLifetime(interrupt) {} }
    return try await withTaskCancellationHandler {
        try await task.value
    } onCancel: {
        task.cancel()
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
        // A parent may have left these blocked (test runners do); we want them.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signalNumber in signals { sigaddset(&mask, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
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
