import BeaconKeys
import Foundation

/// What a device needs to advertise its rotating identity: the secret it shares with the lobby,
/// the period, and the UUIDs. Only the player (or the location's owner) is ever given it.
public struct BeaconKey: Codable, Sendable, Equatable {
    public var secret: BeaconSecret
    /// The length of a period, in seconds.
    public var periodSeconds: Int
    /// The proximity UUID players advertise under.
    public var uuid: UUID
    /// The proximity UUID locations advertise under (``RotatingIdentity/locationUUID(deployment:)``).
    public var locationUUID: UUID
    /// The lobby's clock when it answered: a device sets its periods by it.
    public var serverTime: Date

    public init(secret: BeaconSecret, periodSeconds: Int, uuid: UUID, locationUUID: UUID, serverTime: Date) {
        self.secret = secret
        self.periodSeconds = periodSeconds
        self.uuid = uuid
        self.locationUUID = locationUUID
        self.serverTime = serverTime
    }

    enum CodingKeys: String, CodingKey {
        case secret, periodSeconds, uuid, locationUUID = "locationUuid", serverTime
    }
}

/// Why a sighting in an encounter report proved nothing, where the reporter should know.
public struct SightingRefusal: Codable, Sendable, Equatable {
    /// The sighting's index in the report.
    public var index: Int
    /// `expiredIdentity`: a location's identity from a period that is over (a recording played
    /// back, or a report held too long); `lateReport`: heard longer ago than the lobby's
    /// presence window.
    public var reason: PresenceRefusal

    public init(index: Int, reason: PresenceRefusal) {
        self.index = index
        self.reason = reason
    }
}
