import ArgumentParser
import Glibc

/// `nearplay lobby …`: the lobby server and its tools, which live in their own executable,
/// `nearplay-lobby`, built next to this one (so the agent does not carry the server's libraries).
/// The arguments are handed over unchanged and `nearplay-lobby` takes this process's place.
struct LobbyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lobby",
        abstract: "Run the lobby server that holds players, invitations, games and rewards.",
        discussion: """
            Subcommands: serve (the HTTP + WebSocket lobby on a SQLite file), seed (synthetic \
            players for a load test). See `nearplay lobby serve --help`.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The lobby subcommand and its options.")
    var arguments: [String] = []

    func run() throws {
        let executable = Self.lobbyExecutable()
        guard access(executable, X_OK) == 0 else {
            throw CommandFailure("""
                The lobby server is its own executable, nearplay-lobby, and it is not built next to nearplay \
                (looked for \(executable)): run `swift build --product nearplay-lobby` with the same -c as nearplay.
                """)
        }
        let argv = (["nearplay lobby"] + arguments).map { strdup($0) } + [nil]
        execv(executable, argv)
        throw CommandFailure("Cannot start \(executable): \(String(cString: strerror(errno))).")
    }

    /// `nearplay-lobby` in the folder of the running executable.
    static func lobbyExecutable() -> String {
        executableFolder() + "/nearplay-lobby"
    }

    /// The folder of the running executable (where `swift build` also put the others).
    static func executableFolder() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "." }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }
}
