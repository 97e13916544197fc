import Foundation

/// The session `nearplay login` or `register` obtained: which lobby, who, and the bearer token.
/// Stored owner-only (0600), since the token is as good as the password until it expires.
public struct Credentials: Codable, Sendable, Equatable {
    public var lobby: String
    public var username: String
    public var token: String
    /// The secret and period the player's rotating beacon identity is derived from, as the lobby
    /// issued them (at sign-in, or when the agent first asked). As private as the token: with it
    /// anyone could follow the player from period to period.
    public var beaconKey: RotationKey?

    public init(lobby: String, username: String, token: String, beaconKey: RotationKey? = nil) {
        self.lobby = lobby
        self.username = username
        self.token = token
        self.beaconKey = beaconKey
    }

    /// Writes the credentials atomically with mode 0600 (the folder made owner-only too).
    public func save(to path: String) throws(AgentError) {
        let folder = (path as NSString).deletingLastPathComponent
        try makePrivateDirectory(folder)
        let temporary = path + ".tmp-\(getpid())"
        let data: Data
        do {
            data = try JSONEncoder().encode(self)
        } catch {
            throw AgentError("Cannot encode the credentials: \(error).")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AgentError("Cannot write \(temporary): \(String(cString: strerror(errno))).") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw AgentError("Cannot write \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// Reads stored credentials; refuses a file others can read.
    public static func load(from path: String) throws(AgentError) -> Credentials {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw AgentError("Not logged in (no \(path)): run `nearplay login` or `nearplay register` first.", code: "notLoggedIn")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw AgentError("\(path) can be read by other users: run `chmod 600 \(path)` (and consider logging in again).", code: "insecureCredentials")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            if info.st_mode & S_IFMT == S_IFDIR {
                throw AgentError("The credentials file \(path) is a folder: remove it, then run `nearplay login` again.", code: "notLoggedIn")
            }
            throw AgentError("""
                The credentials file \(path) cannot be read by this user (uid \(getuid())): make it yours and readable \
                (`chown \(getuid()) \(path)`, `chmod 600 \(path)`), or run `nearplay login` again.
                """, code: "notLoggedIn")
        }
        do {
            return try JSONDecoder().decode(Credentials.self, from: data)
        } catch {
            throw AgentError("\(path): \(describe(error)) Run `nearplay login` again.", code: "notLoggedIn")
        }
    }
}
