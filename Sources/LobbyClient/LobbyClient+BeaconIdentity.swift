import BeaconFrames
import Foundation

// The one mapping between the radio's beacon identities (`BeaconFrames.BeaconIdentity`, what
// the agent tracks and prints) and the lobby's wire form (the document's `Beacon` and the flat
// uuid/major/minor of a `Sighting`), so the agent never spells out either side's fields.

extension PlayerBeacon {
    /// The lobby form of an iBeacon identity; nil for AltBeacon and Eddystone, which players do not use.
    public init?(_ identity: BeaconFrames.BeaconIdentity) {
        guard case let .iBeacon(uuid, major, minor) = identity, let id = UUID(uuidString: uuid.description) else { return nil }
        self.init(uuid: id, major: Int(major), minor: Int(minor))
    }

    /// The radio's form; nil when a field is out of range.
    public var beaconIdentity: BeaconFrames.BeaconIdentity? {
        guard let uuid = BeaconUUID(uuid.uuidString), let major = UInt16(exactly: major), let minor = UInt16(exactly: minor) else { return nil }
        return .iBeacon(uuid: uuid, major: major, minor: minor)
    }
}

extension EncounterSighting {
    /// The lobby's form of a sighting of an iBeacon identity; nil for other frames.
    public init?(_ identity: BeaconFrames.BeaconIdentity, distance: Double?, at time: Date) {
        guard let beacon = PlayerBeacon(identity) else { return nil }
        self.init(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, distance: distance, at: time)
    }
}

extension PlayerBeacon {
    /// The lobby form of `identity`, or the lobby's answer for an identity nobody advertises
    /// (404): players and locations advertise iBeacon identities only.
    static func lookedUp(_ identity: BeaconFrames.BeaconIdentity) throws -> PlayerBeacon {
        guard let beacon = PlayerBeacon(identity) else {
            throw LobbyClientError(status: 404, code: "notFound",
                                   message: "\(identity) is not an iBeacon identity: only those name players and locations.")
        }
        return beacon
    }
}
