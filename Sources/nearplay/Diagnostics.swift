import ArgumentParser
import Foundation

/// Messages for the person at the terminal, on standard error, and the exit codes of sysexits.h.
enum Diagnostics {
    /// Bad input data (EX_DATAERR).
    static let dataError = ExitCode(65)
    /// An input file does not exist or cannot be read (EX_NOINPUT).
    static let noInput = ExitCode(66)
    /// An output file cannot be created (EX_CANTCREAT).
    static let cannotCreate = ExitCode(73)

    static func error(_ message: String) {
        write("nearplay: error: " + message + "\n")
    }

    static func warning(_ message: String) {
        write("nearplay: warning: " + message + "\n")
    }

    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// Standard output.
enum StandardOutput {
    static func line(_ text: String) { print(text) }
    static func write(_ text: String) { print(text, terminator: "") }
    /// Pushes buffered output out, so `--json` streams through a pipe.
    static func flush() { fflush(nil) }
}
