import BeaconFrames
import BeaconKeys
import Foundation
import LobbyClient
import Radio

/// What a device advertises its rotating identity with, as the lobby issued it: kept with the
/// player's credentials (or the location's state), owner-only, so a device started while the
/// lobby is away still rotates.
public struct RotationKey: Codable, Sendable, Equatable {
    public var secret: BeaconSecret
    public var period: RotationPeriod
    /// Players' proximity UUID.
    public var uuid: UUID
    /// Locations' proximity UUID.
    public var locationUUID: UUID
    /// Seconds to add to this device's clock to read the lobby's, as measured when the key came.
    public var clockOffset: TimeInterval

    public init(secret: BeaconSecret, period: RotationPeriod, uuid: UUID, locationUUID: UUID, clockOffset: TimeInterval = 0) {
        self.secret = secret
        self.period = period
        self.uuid = uuid
        self.locationUUID = locationUUID
        self.clockOffset = clockOffset
    }

    /// The lobby's answer, received at `receivedAt` by this device's clock; nil when it is not a
    /// usable key.
    public init?(_ key: LobbyBeaconKey, receivedAt: Date = Date()) {
        guard let secret = BeaconSecret(base64URL: key.secret), let period = RotationPeriod(seconds: key.periodSeconds) else { return nil }
        let (uuid, locationUUID) = (key.uuid, key.locationUuid)
        // Offsets under a second are noise (the answer's own travel time).
        let offset = key.serverTime.timeIntervalSince(receivedAt)
        self.init(secret: secret, period: period, uuid: uuid, locationUUID: locationUUID, clockOffset: abs(offset) < 1 ? 0 : offset)
    }

    /// The rotating beacon this key makes, as a player (under ``uuid``) or a location (``locationUUID``).
    public func beacon(_ role: RotatingBeacon.Role, measuredPower: Int8 = -59) -> RotatingBeacon {
        let uuid = role == .player ? uuid : locationUUID
        return RotatingBeacon(uuid: BeaconUUID(uuid.uuidString)!, secret: secret, period: period, role: role,
                              measuredPower: measuredPower, clockOffset: clockOffset)
    }
}
