/// A rule the request broke, or something it named that does not exist. Domain errors carry a kind
/// (what sort of failure), a stable machine code and a sentence for people; the HTTP layer maps the
/// kind to a status, nothing in here knows about HTTP.
public struct LobbyError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The request itself is malformed or a field is out of range.
        case invalidInput
        /// No valid credentials.
        case unauthenticated
        /// Valid credentials, but the player may not do this.
        case forbidden
        /// The thing named does not exist (or is hidden from this player).
        case notFound
        /// The request conflicts with the current state (a limit, a duplicate, a closed game).
        case conflict
        /// The request is well formed, but what it claims does not stand: a score its recording
        /// does not give, a calibration no device at rest gives.
        case refused
        /// Too many of these too quickly; ``LobbyError/retryAfter`` says when to try again.
        case throttled
    }

    public var kind: Kind
    public var code: Code
    public var message: String
    /// Players left out of a group invitation, when the error is that nobody could be invited.
    public var excluded: [ExcludedInvitee]
    /// Whole seconds until a `throttled` request may be made again.
    public var retryAfter: Int?

    public init(_ kind: Kind, _ code: Code, _ message: String, excluded: [ExcludedInvitee] = []) {
        self.kind = kind
        self.code = code
        self.message = message
        self.excluded = excluded
    }

    public var description: String { "\(code): \(message)" }

    static func throttled(_ code: Code, _ message: String, retryAfter seconds: Double) -> LobbyError {
        var error = LobbyError(.throttled, code, message)
        error.retryAfter = max(1, Int(seconds.rounded(.up)))
        return error
    }

    static func invalid(_ field: String, _ message: String) -> LobbyError {
        LobbyError(.invalidInput, .invalidField, "\(field): \(message)")
    }

    static func playerNotFound(_ username: String) -> LobbyError {
        LobbyError(.notFound, .playerNotFound, "No player is called \(username).")
    }

    static func gameNotFound(_ id: Int64) -> LobbyError {
        LobbyError(.notFound, .gameNotFound, "There is no game or invitation \(id).")
    }

    static func invalidKey(_ key: String) -> LobbyError {
        invalid("key", "the idempotency key must be 1 to 128 characters long, without NUL, got \(key.unicodeScalars.count).")
    }

    static let badCredentials = LobbyError(
        .unauthenticated, .invalidCredentials, "Wrong username or password.")
    static let badToken = LobbyError(
        .unauthenticated, .invalidToken,
        "The session token is missing, unknown or expired: log in again with POST /v1/sessions.")
}
