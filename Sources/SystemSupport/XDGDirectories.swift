import Foundation

/// Nearplay's folders after the XDG base directory specification, resolved from an environment:
/// `$XDG_CONFIG_HOME/nearplay` (else `$HOME/.config/nearplay`), `$XDG_STATE_HOME/nearplay` (else
/// `$HOME/.local/state/nearplay`) and `$XDG_RUNTIME_DIR/nearplay` (else `/tmp/nearplay-$UID`).
/// A variable that is set but empty counts as unset, `$HOME` included (then the account's home
/// folder is used). Nothing is created here.
///
/// The one place these rules are written: the agent, the ranging profiles, the sensors'
/// calibration file, the simulated air's socket and the HCI backend's state folder all resolve
/// their folders here.
public struct XDGDirectories: Sendable, Hashable {
    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
    public var configHome: String
    /// `$XDG_STATE_HOME`, else `$HOME/.local/state`.
    public var stateHome: String
    /// `$XDG_RUNTIME_DIR`; nil when unset (a session without one, e.g. over `su` or in cron).
    public var runtimeDir: String?
    /// The first folder of systemd's `$STATE_DIRECTORY` (a service's `StateDirectory=`); nil
    /// outside such a service.
    public var serviceStateDirectory: String?
    /// systemd's `$CREDENTIALS_DIRECTORY`, where a service's `LoadCredential=` files are; nil
    /// outside such a service.
    public var serviceCredentialsDirectory: String?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = value("HOME") ?? NSHomeDirectory()
        configHome = value("XDG_CONFIG_HOME") ?? home + "/.config"
        stateHome = value("XDG_STATE_HOME") ?? home + "/.local/state"
        runtimeDir = value("XDG_RUNTIME_DIR")
        serviceStateDirectory = value("STATE_DIRECTORY")?.split(separator: ":").first.map(String.init)
        serviceCredentialsDirectory = value("CREDENTIALS_DIRECTORY")
    }

    /// Nearplay's configuration folder: `$XDG_CONFIG_HOME/nearplay`.
    public var configDirectory: String { configHome + "/nearplay" }
    /// Nearplay's state folder: `$XDG_STATE_HOME/nearplay`.
    public var stateDirectory: String { stateHome + "/nearplay" }
    /// Nearplay's runtime folder (sockets): `$XDG_RUNTIME_DIR/nearplay`, else
    /// `/tmp/nearplay-$UID` (whoever creates it makes it owner-only).
    public var runtimeDirectory: String { runtimeDir.map { $0 + "/nearplay" } ?? "/tmp/nearplay-\(getuid())" }
}
