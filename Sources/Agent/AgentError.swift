/// A failure the agent reports to the user: a sentence that says what happened and what to do.
public struct AgentError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A short machine-readable word (`badRequest`, `notFound`, `lobbyUnreachable`, …).
    public var code: String
    public var message: String

    public init(_ message: String, code: String = "failed") {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
