import BeaconFrames
import BeaconKeys
import Foundation
import LobbyAPI

/// The secret and period a device derives its rotating beacon identity from.
public typealias LobbyBeaconKey = Components.Schemas.BeaconKey

extension LobbyClient {
    /// The player's rotating-identity key (the lobby issues one the first time it is asked).
    public func beaconKey() async throws -> LobbyBeaconKey {
        try await call { try await $0.getBeaconKey().ok.body.json }
    }

    /// The rotating-identity key of a location the player registered.
    public func beaconKey(location id: Int64) async throws -> LobbyBeaconKey {
        try await call { try await $0.getLocationBeaconKey(path: .init(id: id)).ok.body.json }
    }

    /// The identity a location the player registered advertises at `date` (its beacon's clock).
    public func currentBeacon(location id: Int64, at date: Date = Date()) async throws -> PlayerBeacon {
        let key = try await beaconKey(location: id)
        guard let secret = BeaconSecret(base64URL: key.secret), let period = RotationPeriod(seconds: key.periodSeconds) else {
            throw LobbyClientError(status: 200, code: .badResponse, message: "The lobby gave location \(id) a beacon key that is not one.", excluded: [])
        }
        let (major, minor) = RotatingIdentity.location(secret, period: period.index(at: date))
        return PlayerBeacon(uuid: key.locationUuid, major: major, minor: minor)
    }

    /// The location advertising `identity` now.
    public func resolveLocation(_ identity: BeaconFrames.BeaconIdentity) async throws -> LobbyLocation {
        let beacon = try PlayerBeacon.lookedUp(identity)
        return try await call {
            try await $0.resolveLocationBeacon(path: .init(uuid: beacon.uuid.uuidString, major: beacon.major, minor: beacon.minor)).ok.body.json
        }
    }
}
