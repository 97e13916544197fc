import ArgumentParser
import Foundation
import Logging
import Radio

/// Options shared by the commands that use the Bluetooth radio.
struct RadioOptions: ParsableArguments {
    @Option(help: "Bluetooth adapter to use, e.g. hci1 (see `nearplay adapters`). Default: the first powered one (hci0 with --backend hci).")
    var adapter: String?

    @Flag(name: .shortAndLong, help: "Log more about what the radio does.")
    var verbose = false

    func validate() throws {
        if let adapter, !RadioSelection.isAdapterName(adapter) {
            throw ValidationError("--adapter takes an adapter name such as hci0, not “\(adapter)”.")
        }
    }

    /// Sends log lines to standard error: notices and up, or everything with --verbose.
    func bootstrapLogging() {
        bootstrapCommandLogging(level: verbose ? .debug : .notice)
    }
}

/// Every command's log lines go to standard error, from `level` up.
func bootstrapCommandLogging(level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}

/// Turns radio failures into exit codes and sentences for the terminal. Radio throws
/// ``RadioError`` for every failure of its own (D-Bus ones included), so this needs no D-Bus.
enum RadioFailure {
    /// EX_UNAVAILABLE: the service or hardware cannot do it.
    static let unavailable = ExitCode(69)
    /// EX_NOPERM.
    static let permissionDenied = ExitCode(77)

    static func report(_ error: any Error) -> ExitCode {
        switch error {
        case let error as RadioError:
            Diagnostics.error(error.description)
            return error.code == .permissionDenied ? permissionDenied : unavailable
        default:
            Diagnostics.error("\(error)")
            return ExitCode.failure
        }
    }
}
