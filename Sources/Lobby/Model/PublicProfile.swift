import Foundation

/// What other authenticated players see of a player: no e-mail, no beacon.
public struct PublicProfile: Codable, Sendable, Equatable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var photoURL: String?
    public var stats: PlayerStats
    /// Its device's radio offsets from the last crowd solve; nil until it had enough partners.
    public var radioOffsets: RadioOffsets? = nil
}

/// How a device's radio differs from a reference one, as the lobby solved it from the two-way
/// readings players reported (``LobbyStore/solveCrowdCalibration()``), in dB. Another device's
/// reading of this one is `transmit` stronger than its advertised measured power says; its own
/// readings are `receive` higher than a reference receiver's. The errors are standard errors:
/// what the readings did not pin (the common level of all devices, unless anchored) stays at the
/// prior's 6 dB.
public struct RadioOffsets: Codable, Sendable, Equatable {
    /// −30 to 30 dB (the solve's answer is held to that range).
    public var transmit: Double
    public var receive: Double
    public var transmitError: Double
    public var receiveError: Double
    /// Players whose exchanges with this device the solve used.
    public var pairs: Int
    public var solvedAt: Date

    public init(transmit: Double, receive: Double, transmitError: Double, receiveError: Double, pairs: Int, solvedAt: Date) {
        self.transmit = transmit
        self.receive = receive
        self.transmitError = transmitError
        self.receiveError = receiveError
        self.pairs = pairs
        self.solvedAt = solvedAt
    }
}

/// A player's results over the statistics span (30 days by default).
public struct PlayerStats: Codable, Sendable, Equatable {
    /// Length of the span covered, in days.
    public var spanDays: Double
    public var gamesPlayed: Int
    public var gamesWon: Int
    public var gamesLost: Int
    /// Finished games nobody won (equal rounds won and equal totals).
    public var gamesDrawn: Int
    public var roundsWon: Int
    public var bestScore: Int?
}
