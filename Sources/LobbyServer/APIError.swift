import Foundation
import Hummingbird
import Lobby

/// An error with its HTTP status and the JSON body `{"error": {"code", "message"}}`. Domain errors
/// become one here, and only here.
struct APIError: Error, HTTPResponseError {
    var status: HTTPResponse.Status
    var code: LobbyError.Code
    var message: String
    var excluded: [ExcludedInvitee] = []
    /// Seconds for a `Retry-After` header (429 answers).
    var retryAfter: Int?
    /// The methods for an `Allow` header (405 answers).
    var allow: [String] = []

    init(_ status: HTTPResponse.Status, _ code: LobbyError.Code, _ message: String, excluded: [ExcludedInvitee] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.excluded = excluded
    }

    init(_ error: LobbyError) {
        let status: HTTPResponse.Status = switch error.kind {
        case .invalidInput: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .refused: .unprocessableContent
        case .throttled: .tooManyRequests
        }
        self.init(status, error.code, error.message, excluded: error.excluded)
        retryAfter = error.retryAfter
    }

    /// Describes a JSON decoding failure by the path of the field it happened at.
    init(_ error: DecodingError) {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "the body" : String(keys.drop(while: { $0 == "." }))
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(.badRequest, .wrongType, "\(path(context)): expected \(Self.jsonName(type)).")
        case .valueNotFound(let type, let context):
            self.init(.badRequest, .missingValue, "\(path(context)): expected \(Self.jsonName(type)), got null.")
        case .keyNotFound(let key, let context):
            let parent = path(context)
            self.init(.badRequest, .missingField, "\(parent == "the body" ? "" : parent + ".")\(key.stringValue): this field is required.")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                self.init(.badRequest, .malformedJSON, "The body is not valid JSON: \(context.debugDescription)")
            } else {
                self.init(.badRequest, .invalidValue, "\(path(context)): \(context.debugDescription)")
            }
        @unknown default:
            self.init(.badRequest, .malformedJSON, "The body could not be decoded.")
        }
    }

    /// A sign-in or registration over the throttle's limits.
    static func throttled(retryAfter seconds: Int) -> APIError {
        var error = APIError(.tooManyRequests, .tooManyAttempts,
            "Too many sign-in or registration attempts from this address or for this account: try again in \(seconds) s.")
        error.retryAfter = seconds
        return error
    }

    static func jsonName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is Date.Type: "an ISO 8601 date"
        case is UUID.Type: "a UUID"
        default: type is any Collection.Type ? "an array" : "an object"
        }
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            var code: LobbyError.Code
            var message: String
            var excluded: [ExcludedInvitee]?
        }
        var error: Detail
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(error: .init(code: code, message: message, excluded: excluded.isEmpty ? nil : excluded))
        var response = try JSONBody.response(status, body)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        if !allow.isEmpty { response.headers[.allow] = allow.joined(separator: ", ") }
        return response
    }
}
