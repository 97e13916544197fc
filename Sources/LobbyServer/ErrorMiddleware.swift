import Foundation
import Hummingbird
import Lobby
import Logging

/// Turns every error into the API's JSON error shape: domain errors by their kind, Hummingbird's own
/// HTTP errors (unknown route, bad path parameter) keeping their status, and anything else into a
/// logged 500 that reveals nothing.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as LobbyError {
            throw APIError(error)
        } catch let error as HTTPError where error.status == .notFound
                    && !OpenAPIDocument.methods(of: request.uri.path).isEmpty
                    && !OpenAPIDocument.methods(of: request.uri.path).contains(request.method.rawValue) {
            // A path the API has, asked with a method it does not have.
            let allowed = OpenAPIDocument.methods(of: request.uri.path)
            var refusal = APIError(.methodNotAllowed, .methodNotAllowed,
                                   "\(request.method) is not a method of \(request.uri.path): it takes \(allowed.joined(separator: ", ")).")
            refusal.allow = allowed
            throw refusal
        } catch let error as HTTPError {
            let code: LobbyError.Code = switch error.status {
            case .notFound: .routeNotFound
            case .methodNotAllowed: .methodNotAllowed
            case .contentTooLarge: .bodyTooLarge
            case .unauthorized: .invalidToken
            default: .badRequest
            }
            let message = error.body ?? (error.status == .notFound
                ? "No route \(request.method) \(request.uri.path): see /v1/openapi.yaml." : error.status.reasonPhrase)
            throw APIError(error.status, code, message)
        } catch {
            context.logger.error("Unexpected error on \(request.method) \(request.uri.path): \(error)")
            throw APIError(.internalServerError, .internal, "The server failed; the error was logged.")
        }
    }
}
