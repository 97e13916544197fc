import BeaconKeys
import Foundation
import Minigames

/// The rules' numbers: limits, lifetimes and windows. Every one is configurable so a deployment (or a
/// test) can tune them; the defaults are the documented ones.
public struct LobbyConfiguration: Sendable {
    /// The iBeacon proximity UUID every player of this deployment advertises under.
    public var deploymentUUID: UUID
    /// A player takes part in at most this many pending or open games at once.
    public var maximumOpenGames: Int
    /// A player holds at most this many unanswered invitations from new accounts
    /// (``newAccountAge``) at once. Invitations from established accounts are bounded per pair
    /// (one pending or open game per pair) and by each inviter's ``maximumOpenGames``, so
    /// throw-away accounts cannot fill a player's slots and keep everyone else from inviting them.
    public var maximumOpenInvitations: Int
    /// How long an invitation waits for answers before it expires, in seconds.
    public var invitationLifetime: TimeInterval
    /// After a decline, the inviter cannot invite the same player again for this long, in seconds.
    public var declineCooldown: TimeInterval
    /// A player "currently sees" another one it reported an encounter with this recently, in seconds.
    public var encounterWindow: TimeInterval
    /// Statistics cover games finished in this span before now, in seconds.
    public var statisticsSpan: TimeInterval
    /// Number of rounds of a new game.
    public var roundsPerGame: Int
    /// The minigames rounds are drawn from: names of ``MinigameCatalog`` (checked by
    /// ``validated()``, which every store does when it opens).
    public var enabledMinigames: [MinigameName]
    /// How long a session token stays valid, in seconds.
    public var sessionLifetime: TimeInterval
    /// The bcrypt cost of password hashes (4…31; each step doubles the work).
    public var bcryptCost: UInt8
    /// The largest accepted profile photo, in bytes.
    public var maximumPhotoBytes: Int
    /// How long the idempotency keys of invitations and encounter reports are kept, in seconds: a
    /// retry with the same key within this time is answered as the first request was.
    public var requestKeyLifetime: TimeInterval
    /// How long events stay in the feed (`GET /v1/events`), in seconds: an agent offline longer
    /// resumes with what is left.
    public var eventRetention: TimeInterval
    /// How long `peerReading` events stay, in seconds: they matter only while two players are near.
    public var peerReadingRetention: TimeInterval
    /// Events held for a live (WebSocket) client that has not taken them yet; past it the client
    /// is sent the rest from the feed.
    public var liveEventBuffer: Int
    /// How long a deleted player's username (and any that looks like it) stays reserved, in seconds.
    public var usernameReservation: TimeInterval
    /// New locations one account may register in 24 hours.
    public var locationsPerDay: Int
    /// An account younger than this, in seconds, is new: it may invite only players it met both
    /// ways (each one's agent reported the other within ``encounterWindow``), and its invitations
    /// count against the invitee's ``maximumOpenInvitations``.
    public var newAccountAge: TimeInterval
    /// Encounter reports one player may send per minute (as a burst, then one every 60/n s).
    public var encounterReportsPerMinute: Int
    /// Beacon resolutions one player may ask for per minute (as a burst, then one every 60/n s).
    public var resolutionsPerMinute: Int
    /// Identities one player may name per hour, in encounter reports or resolutions, that lead to
    /// no player on the air: an agent hears few, a player walking the identity space many. When
    /// they are spent, reports record only players the reporter already met and resolutions are
    /// refused with 429.
    public var identityGuessesPerHour: Int
    /// Changes of a player's stored sensor calibration allowed in 24 hours (storing the same one
    /// again is not a change): enough to recalibrate a new device or room, too few to try
    /// calibrations until one scores best.
    public var calibrationChangesPerDay = 3
    /// How long each rotating beacon identity lasts (``RotationPeriod``): players and locations
    /// advertise a new major and minor, derived from a secret only they and the lobby hold, every
    /// period. Agents and beacons read it from the lobby. 15 minutes by default; tests use seconds.
    public var rotationPeriod: RotationPeriod = .standard
    /// A sighting of a location proves presence only when it reaches the lobby within this many
    /// seconds of the location's period ending (and of being heard): an identity recorded
    /// earlier and advertised again elsewhere is refused. It bounds a live relay to seconds.
    public var presenceReportWindow: TimeInterval = 30
    /// How long after the upgrade to rotating identities the old static ones still resolve, in
    /// seconds, so devices already deployed can be updated: counted from the first start of a
    /// lobby that had players or locations then (a new deployment has no static identities). 0
    /// turns them off at once.
    public var staticIdentityGrace: TimeInterval = 14 * 86400
    /// Calibration from the crowd (``LobbyStore/solveCrowdCalibration()``): a reading one player
    /// reports of another makes an exchange with the other's reading of it when the two were
    /// taken at most this many seconds apart (both directions of one path at about one moment).
    public var crowdPairSeconds: TimeInterval = 120
    /// At most one exchange per pair of players is recorded in this many seconds: two agents
    /// near each other report every few seconds, and readings a minute apart say little more.
    public var crowdExchangeSpacing: TimeInterval = 60
    /// The solve uses the exchanges of this many seconds before it; older ones are deleted.
    public var crowdCalibrationWindow: TimeInterval = 24 * 3600
    /// Each player's exchanges with at most this many partners (the most recent) take part in a
    /// solve, so no player, however busy (or however many accounts it made), outweighs the rest.
    public var crowdPairsPerDevice = 50
    /// A player's offsets are published once it exchanged readings with this many partners.
    public var crowdMinimumPairs = 3
    /// How often the lobby server solves, in seconds; 0 turns the periodic solve off.
    public var crowdCalibrationInterval: TimeInterval = 600
    /// The most players one solve takes at once. A solve costs about the cube of its players
    /// (`nearplay-air-bench crowd-cost`, release, 50 partners each: 100 in 0.05 s, 200 in 0.33 s,
    /// 400 in 2.5 s and 25 MB), so players who never met are solved apart, and a crowd larger
    /// than this is cut into groups of neighbours this size (the exchanges between two groups
    /// are left out).
    public var crowdDevicesPerSolve = 200

    public init(
        deploymentUUID: UUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
        maximumOpenGames: Int = 5,
        maximumOpenInvitations: Int = 10,
        invitationLifetime: TimeInterval = 24 * 3600,
        declineCooldown: TimeInterval = 3600,
        encounterWindow: TimeInterval = 10 * 60,
        statisticsSpan: TimeInterval = 30 * 24 * 3600,
        roundsPerGame: Int = 3,
        enabledMinigames: [MinigameName] = MinigameCatalog.names,
        sessionLifetime: TimeInterval = 30 * 24 * 3600,
        bcryptCost: UInt8 = 12,
        maximumPhotoBytes: Int = 512 * 1024,
        requestKeyLifetime: TimeInterval = 7 * 24 * 3600,
        eventRetention: TimeInterval = 30 * 24 * 3600,
        peerReadingRetention: TimeInterval = 3600,
        liveEventBuffer: Int = 1024,
        usernameReservation: TimeInterval = 90 * 24 * 3600,
        locationsPerDay: Int = 5,
        newAccountAge: TimeInterval = 7 * 24 * 3600,
        encounterReportsPerMinute: Int = 60,
        resolutionsPerMinute: Int = 120,
        identityGuessesPerHour: Int = 100
    ) {
        self.deploymentUUID = deploymentUUID
        self.maximumOpenGames = maximumOpenGames
        self.maximumOpenInvitations = maximumOpenInvitations
        self.invitationLifetime = invitationLifetime
        self.declineCooldown = declineCooldown
        self.encounterWindow = encounterWindow
        self.statisticsSpan = statisticsSpan
        self.roundsPerGame = roundsPerGame
        self.enabledMinigames = enabledMinigames
        self.sessionLifetime = sessionLifetime
        self.bcryptCost = bcryptCost
        self.maximumPhotoBytes = maximumPhotoBytes
        self.requestKeyLifetime = requestKeyLifetime
        self.eventRetention = eventRetention
        self.peerReadingRetention = peerReadingRetention
        self.liveEventBuffer = liveEventBuffer
        self.usernameReservation = usernameReservation
        self.locationsPerDay = locationsPerDay
        self.newAccountAge = newAccountAge
        self.encounterReportsPerMinute = encounterReportsPerMinute
        self.resolutionsPerMinute = resolutionsPerMinute
        self.identityGuessesPerHour = identityGuessesPerHour
    }

    /// This configuration with its minigame names in the catalog's spelling; throws an
    /// `invalidField` error naming an unknown minigame, or an empty list.
    public func validated() throws -> LobbyConfiguration {
        var copy = self
        copy.enabledMinigames = try Self.minigames(enabledMinigames)
        guard roundsPerGame >= 1 else {
            throw LobbyError.invalid("roundsPerGame", "a game needs at least 1 round, got \(roundsPerGame).")
        }
        guard liveEventBuffer >= 1 else {
            throw LobbyError.invalid("liveEventBuffer", "a live client needs room for at least 1 event, got \(liveEventBuffer).")
        }
        for (name, value) in [("encounterReportsPerMinute", encounterReportsPerMinute), ("resolutionsPerMinute", resolutionsPerMinute),
                              ("identityGuessesPerHour", identityGuessesPerHour)] where value < 1 {
            throw LobbyError.invalid(name, "must be at least 1, got \(value).")
        }
        guard presenceReportWindow >= 1 else {
            throw LobbyError.invalid("presenceReportWindow", "must be at least 1 s, got \(presenceReportWindow).")
        }
        guard staticIdentityGrace >= 0 else {
            throw LobbyError.invalid("staticIdentityGrace", "must be 0 s or more, got \(staticIdentityGrace).")
        }
        for (name, value) in [("crowdPairSeconds", crowdPairSeconds), ("crowdCalibrationWindow", crowdCalibrationWindow)]
        where !(value.isFinite && value > 0) {
            throw LobbyError.invalid(name, "must be more than 0 s, got \(value).")
        }
        for (name, value) in [("crowdExchangeSpacing", crowdExchangeSpacing), ("crowdCalibrationInterval", crowdCalibrationInterval)]
        where !(value.isFinite && value >= 0) {
            throw LobbyError.invalid(name, "must be 0 s or more, got \(value).")
        }
        for (name, value) in [("crowdPairsPerDevice", crowdPairsPerDevice), ("crowdMinimumPairs", crowdMinimumPairs)] where value < 1 {
            throw LobbyError.invalid(name, "must be at least 1, got \(value).")
        }
        guard crowdDevicesPerSolve > crowdMinimumPairs else {
            throw LobbyError.invalid("crowdDevicesPerSolve", "must be more than crowdMinimumPairs (\(crowdMinimumPairs)), got \(crowdDevicesPerSolve): no player could be published.")
        }
        guard crowdMinimumPairs <= crowdPairsPerDevice else {
            throw LobbyError.invalid("crowdMinimumPairs", "must be at most crowdPairsPerDevice (\(crowdPairsPerDevice)), got \(crowdMinimumPairs): no player could be published.")
        }
        return copy
    }

    /// The catalog's names for `names` (case-insensitive, duplicates dropped), or an error naming
    /// the first unknown one.
    public static func minigames(_ names: [MinigameName]) throws -> [MinigameName] {
        var known: [MinigameName] = []
        for name in names {
            guard let game = MinigameCatalog.game(named: name) else {
                throw LobbyError.invalid("enabledMinigames",
                    "there is no minigame called \"\(name)\"; the minigames are \(Self.catalogNames).")
            }
            if !known.contains(game.name) { known.append(game.name) }
        }
        guard !known.isEmpty else {
            throw LobbyError.invalid("enabledMinigames", "enable at least one of \(Self.catalogNames).")
        }
        return known
    }

    /// The catalog's names as a sentence lists them: `screamer, shaker, statue, quickdraw`.
    private static var catalogNames: String { MinigameCatalog.names.map(\.rawValue).joined(separator: ", ") }
}
