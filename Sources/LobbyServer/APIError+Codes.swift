import Lobby

/// The error codes of HTTP itself, which the lobby's rules never raise: a route or method that does
/// not exist, a body that does not decode or is too large, a connection refused before routing.
extension LobbyError.Code {
    // Routing and authentication.
    static let routeNotFound = Self("routeNotFound")
    static let methodNotAllowed = Self("methodNotAllowed")
    static let missingToken = Self("missingToken")
    static let upgradeRequired = Self("upgradeRequired")
    static let badRequest = Self("badRequest")
    static let `internal` = Self("internal")

    // Bodies.
    static let bodyTooLarge = Self("bodyTooLarge")
    static let malformedJSON = Self("malformedJSON")
    static let wrongType = Self("wrongType")
    static let missingValue = Self("missingValue")
    static let missingField = Self("missingField")
    static let invalidValue = Self("invalidValue")
    static let immutableField = Self("immutableField")
    static let currentPasswordRequired = Self("currentPasswordRequired")

    // Throttles and connections, refused before a route runs.
    static let tooManyAttempts = Self("tooManyAttempts")
    static let tooManyConnections = Self("tooManyConnections")
    static let headTooLarge = Self("headTooLarge")
    static let malformedRequest = Self("malformedRequest")
    static let requestTimeout = Self("requestTimeout")
}
