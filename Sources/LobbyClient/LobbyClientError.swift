/// An error answer of the lobby API: its HTTP status and the server's code and message.
public struct LobbyClientError: Error, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: Code
    public var message: String
    /// Players left out, when an invitation could not be sent to anybody.
    public var excluded: [Invitation.Excluded]

    public init(status: Int, code: Code, message: String, excluded: [Invitation.Excluded] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.excluded = excluded
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// The machine code of an error answer, the `code` of the API's `{"error": {"code", "message"}}`
    /// body, or one of the client's own for what went wrong on its side (status 0).
    ///
    /// The lobby adds codes with its rules and a client must pass on those it does not know, so it
    /// is a raw-value struct (as `BeaconFrames.ADType` is) with a constant for each code the
    /// agent's side makes or branches on, not a closed enum.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        // The client's own (status 0, or a success answer it cannot use).
        /// The configured lobby address is not a URL.
        public static let invalidLobbyURL: Code = "invalidLobbyURL"
        /// A success status the API document does not give the operation.
        public static let unexpectedResponse: Code = "unexpectedResponse"
        /// An answer that does not hold what the document promises.
        public static let badResponse: Code = "badResponse"
        /// The lobby closed the live event stream.
        public static let liveEventsClosed: Code = "liveEventsClosed"
        /// The live event stream did not open in time.
        public static let liveEventsTimedOut: Code = "liveEventsTimedOut"

        // The lobby's, that the agent's side branches on or documents.
        /// No calibration stored for this device (status 404).
        public static let calibrationNotFound: Code = "calibrationNotFound"
        /// The hourly budget of identities that belong to nobody is spent: only players met
        /// before are answered until it refills (status 429).
        public static let tooManyUnknownIdentities: Code = "tooManyUnknownIdentities"
        /// The lobby has not solved this device's radio offsets yet (status 404).
        public static let radioOffsetsNotSolved: Code = "radioOffsetsNotSolved"
        /// A calibration no device at rest gives (status 422).
        public static let calibrationRefused: Code = "calibrationRefused"
        /// A claimed score that does not stand (status 422).
        public static let scoreRefused: Code = "scoreRefused"
        /// A signal asked for a round without one (status 409).
        public static let noSignal: Code = "noSignal"
        /// Joining a tournament away from its location (status 403).
        public static let notNearLocation: Code = "notNearLocation"
        /// No such location of ours (status 404).
        public static let locationNotFound: Code = "locationNotFound"
    }
}
