import Foundation

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

/// A JSON decoding error as one sentence that names the key path.
func describe(_ error: any Error) -> String {
    func path(_ codingPath: [any CodingKey]) -> String {
        let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "(top level)" : text)
    }
    switch error as? DecodingError {
    case let .typeMismatch(type, context)?:
        return "\(path(context.codingPath)): expected \(type), \(context.debugDescription.lowercased())"
    case let .valueNotFound(type, context)?:
        return "\(path(context.codingPath)): expected \(type), found null."
    case let .keyNotFound(key, context)?:
        return "\(path(context.codingPath + [key])): missing."
    case let .dataCorrupted(context)?:
        let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
        return "\(path(context.codingPath)): \(underlying ?? context.debugDescription)"
    default:
        return "\(error)"
    }
}
