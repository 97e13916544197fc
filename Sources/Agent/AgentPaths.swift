import Foundation
import SystemSupport

/// Where the agent keeps its files, after the XDG base directory specification.
///
/// Configuration and the session token under `$XDG_CONFIG_HOME/nearplay` (else `~/.config`),
/// the identity cache and the outgoing queue under `$XDG_STATE_HOME/nearplay` (else
/// `~/.local/state`), the local API's socket under `$XDG_RUNTIME_DIR/nearplay` (else
/// `/tmp/nearplay-UID`, made owner-only).
public struct AgentPaths: Sendable, Hashable {
    public var configDirectory: String
    public var stateDirectory: String
    public var runtimeDirectory: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let xdg = XDGDirectories(environment: environment)
        configDirectory = xdg.configDirectory
        stateDirectory = xdg.stateDirectory
        runtimeDirectory = xdg.runtimeDirectory
    }

    public var configurationFile: String { configDirectory + "/agent.json" }
    public var credentialsFile: String { configDirectory + "/credentials.json" }
    public var socket: String { runtimeDirectory + "/agent.sock" }
}

/// Creates `path` and its parents; the last folder gets `mode` (owner-only by default) even when
/// it already existed, and must belong to us.
func makePrivateDirectory(_ path: String, mode: mode_t = 0o700) throws(AgentError) {
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw AgentError("Cannot create the folder \(path): \(error.localizedDescription).")
    }
    var info = stat()
    guard stat(path, &info) == 0 else { throw AgentError("Cannot read the folder \(path): \(String(cString: strerror(errno))).") }
    guard info.st_uid == getuid() else {
        throw AgentError("The folder \(path) belongs to another user (uid \(info.st_uid)); remove it or set XDG_RUNTIME_DIR.")
    }
    if info.st_mode & 0o777 != mode, chmod(path, mode) != 0 {
        throw AgentError("Cannot make \(path) owner-only: \(String(cString: strerror(errno))).")
    }
}
