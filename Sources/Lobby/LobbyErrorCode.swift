extension LobbyError {
    /// The stable machine code of an error, the `code` of the API's `{"error": {"code", "message"}}`
    /// body. Clients branch on it and new rules bring new codes, so it is a raw-value struct with a
    /// constant per code (as `BeaconFrames.ADType` is) rather than a closed enum, and no code is
    /// spelled twice. The server adds the codes of HTTP itself (routes, bodies, connections) beside
    /// its error type; these are the lobby's rules.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        // Input and credentials.
        public static let invalidField = Code("invalidField")
        public static let invalidCredentials = Code("invalidCredentials")
        public static let invalidToken = Code("invalidToken")
        public static let wrongCurrentPassword = Code("wrongCurrentPassword")

        // Accounts, photos and relations.
        public static let usernameTaken = Code("usernameTaken")
        public static let beaconsExhausted = Code("beaconsExhausted")
        public static let playerNotFound = Code("playerNotFound")
        public static let photoTooLarge = Code("photoTooLarge")
        public static let notAnImage = Code("notAnImage")
        public static let photoNotFound = Code("photoNotFound")
        public static let cannotBlockYourself = Code("cannotBlockYourself")
        public static let notNearby = Code("notNearby")

        // Beacons and encounter reports.
        public static let beaconNotFound = Code("beaconNotFound")
        public static let ambiguousIdentity = Code("ambiguousIdentity")
        public static let tooManyResolutions = Code("tooManyResolutions")
        public static let tooManyUnknownIdentities = Code("tooManyUnknownIdentities")
        public static let tooManyReports = Code("tooManyReports")
        /// No radio offsets for the player yet: it exchanged readings with too few players.
        public static let radioOffsetsNotSolved = Code("radioOffsetsNotSolved")

        // Invitations and games.
        public static let openGameLimitReached = Code("openGameLimitReached")
        public static let nobodyInvitable = Code("nobodyInvitable")
        public static let notInvited = Code("notInvited")
        public static let invitationClosed = Code("invitationClosed")
        public static let gameNotFound = Code("gameNotFound")
        public static let gameNotOpen = Code("gameNotOpen")
        public static let notYourGame = Code("notYourGame")
        public static let roundNotFound = Code("roundNotFound")
        public static let noMinigames = Code("noMinigames")

        // Scores, calibrations and signals.
        public static let scoreAlreadySubmitted = Code("scoreAlreadySubmitted")
        public static let scoreRefused = Code("scoreRefused")
        public static let calibrationRefused = Code("calibrationRefused")
        public static let calibrationChangeLimit = Code("calibrationChangeLimit")
        public static let calibrationNotFound = Code("calibrationNotFound")
        public static let signalNotRevealed = Code("signalNotRevealed")
        public static let reactionBeforeSignal = Code("reactionBeforeSignal")
        public static let noSignal = Code("noSignal")
        public static let notFlagged = Code("notFlagged")
        public static let noRecordings = Code("noRecordings")

        // Locations, tournaments and boards.
        public static let locationNotFound = Code("locationNotFound")
        public static let locationNameTaken = Code("locationNameTaken")
        public static let locationLimitReached = Code("locationLimitReached")
        public static let locationsExhausted = Code("locationsExhausted")
        public static let locationNotPlaced = Code("locationNotPlaced")
        public static let tournamentNotFound = Code("tournamentNotFound")
        public static let tournamentClosed = Code("tournamentClosed")
        public static let notNearLocation = Code("notNearLocation")
        public static let entryNotFound = Code("entryNotFound")
        public static let notEntered = Code("notEntered")
        public static let boardNotFound = Code("boardNotFound")
    }
}
