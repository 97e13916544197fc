import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Radio

/// What a placed location beacon hears of other location beacons between two reports: per
/// identity, the mean RSSI and the variance of that mean. The lobby resolves the identities
/// (only the owner's own beacons on the same site count) and pairs the two directions of each
/// path at the distance their positions give (``LocationBeaconDevice``).
///
/// Only location identities are kept (the deployment's location UUID, or the old static form:
/// the deployment UUID with major 0); players' identities never leave the device, so a location
/// beacon cannot be used to follow players.
public struct BeaconHearings: Sendable {
    /// The UUIDs a location advertises under: the rotating identities' and the static one's.
    public let locationUUID: BeaconUUID?
    public let staticUUID: BeaconUUID?
    /// The variance (dB²) of one reading taken when too few were heard to measure it: 4 dB of noise.
    public static let singleReadingVariance = 16.0

    struct Tally {
        var count = 0
        var sum = 0.0
        var squares = 0.0
        var measuredPower: Int
        var last: Date
    }

    private var tallies: [BeaconIdentity: Tally] = [:]

    public init(locationUUID: BeaconUUID?, staticUUID: BeaconUUID?) {
        self.locationUUID = locationUUID
        self.staticUUID = staticUUID
    }

    /// Counts `sighting` if it is a location's, with an RSSI and a measured power. (A device
    /// that hears itself is told apart by the lobby, which knows whose identity it is.)
    public mutating func add(_ sighting: Sighting, at time: Date) {
        guard accepts(sighting), let rssi = sighting.rssi, let power = sighting.measuredPower else { return }
        var tally = tallies[sighting.identity] ?? Tally(measuredPower: power, last: time)
        tally.count += 1
        tally.sum += Double(rssi)
        tally.squares += Double(rssi * rssi)
        tally.measuredPower = power
        tally.last = max(tally.last, time)
        tallies[sighting.identity] = tally
    }

    /// Whether `sighting` is a location's reading: its identity under the location UUID (or the
    /// old static form, the deployment UUID with the locations' major), with an RSSI and a
    /// measured power.
    public func accepts(_ sighting: Sighting) -> Bool {
        guard case let .iBeacon(uuid, major, _) = sighting.identity, sighting.rssi != nil, sighting.measuredPower != nil else { return false }
        return uuid == locationUUID || (uuid == staticUUID && major == Self.staticLocationMajor)
    }

    /// The major every location's static identity has (the lobby's `LocationBeacon.major`).
    static let staticLocationMajor: UInt16 = 0

    public var isEmpty: Bool { tallies.isEmpty }

    /// The hearings since the last call, at most `limit` (the loudest first), and forgets them.
    /// Each carries the mean RSSI and the variance of that mean: the readings' own variance
    /// over their count, with at least 1 dB² of it left (readings a moment apart are not independent).
    public mutating func take(limit: Int = 100) -> [EncounterSighting] {
        let taken = tallies.sorted {
            let (a, b) = ($0.value.sum / Double($0.value.count), $1.value.sum / Double($1.value.count))
            return a != b ? a > b : $0.key.description < $1.key.description
        }.prefix(limit)
        tallies.removeAll(keepingCapacity: true)
        return taken.compactMap { identity, tally in
            let n = Double(tally.count)
            let mean = tally.sum / n
            let spread = tally.count > 1 ? max(0, (tally.squares - n * mean * mean) / (n - 1)) : Self.singleReadingVariance
            guard (-130...20).contains(mean), (-128...127).contains(tally.measuredPower) else { return nil }
            var hearing = EncounterSighting(identity, distance: nil, at: tally.last)
            hearing?.rssi = mean
            hearing?.measuredPower = Double(tally.measuredPower)
            hearing?.rssiVariance = max(1, spread / n)
            return hearing
        }
    }
}

extension BeaconIdentity {
    /// The proximity UUID of an iBeacon identity.
    var iBeaconUUID: BeaconUUID? {
        guard case let .iBeacon(uuid, _, _) = self else { return nil }
        return uuid
    }
}
