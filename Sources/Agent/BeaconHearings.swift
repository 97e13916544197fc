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
        guard case let .iBeacon(uuid, major, _) = sighting.identity,
              uuid == locationUUID || (uuid == staticUUID && major == 0),
              let rssi = sighting.rssi, let power = sighting.measuredPower
        else { return }
        var tally = tallies[sighting.identity] ?? Tally(measuredPower: power, last: time)
        tally.count += 1
        tally.sum += Double(rssi)
        tally.squares += Double(rssi * rssi)
        tally.measuredPower = power
        tally.last = max(tally.last, time)
        tallies[sighting.identity] = tally
    }

    public var isEmpty: Bool { tallies.isEmpty }

    /// The hearings since the last call, at most `limit` (the loudest first), and forgets them.
    /// Each carries the mean RSSI and the variance of that mean: the readings' own variance
    /// over their count, with at least 1 dB² of it left (readings a moment apart are not independent).
    public mutating func take(limit: Int = 100) -> [EncounterSighting] {
        let taken = tallies.sorted { $0.value.sum / Double($0.value.count) > $1.value.sum / Double($1.value.count) }.prefix(limit)
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

extension LocationBeaconDevice {
    /// Scans and reports what the device heard of other location beacons every `interval` until
    /// cancelled. A lobby that is away is told at the next turn (the readings of the turn are
    /// dropped: exchanges need both directions within two minutes, so old ones would pair with
    /// nothing); one that refuses (the location is not placed, not ours) is logged once, since
    /// then the site's calibration goes without this beacon.
    static func reportHearings(_ location: MarkedLocation, session: Credentials, scanner: any AdvertisementScanner,
                               every interval: Duration, logger: Logger) async throws {
        let collected = HearingCollector(BeaconHearings(locationUUID: location.beaconKey.flatMap { BeaconUUID($0.locationUUID.uuidString) }, staticUUID: location.beacon.iBeaconUUID))
        var client = LobbyClient(baseURL: location.lobby).authenticated(session.token)
        client.timeout = .seconds(5)
        let lobby = client
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await scanner.scan { advertisement in
                    guard let sighting = Sighting(advertisement) else { return }
                    await collected.add(sighting)
                }
            }
            group.addTask {
                var refused = false
                while !Task.isCancelled {
                    try await Task.sleep(for: interval)
                    let hearings = await collected.take()
                    guard !hearings.isEmpty else { continue }
                    do {
                        let receipt = try await lobby.reportHearings(location: location.id, hearings)
                        if refused { logger.notice("location \(location.name): the lobby takes its hearings again") }
                        refused = false
                        logger.debug("location \(location.name): reported \(hearings.count) hearings, \(receipt.recorded) recorded, \(receipt.exchanges) exchanges")
                    } catch let error as LobbyClientError where error.status == 409 || error.status == 404 || error.status == 401 {
                        if !refused {
                            logger.error("location \(location.name): the lobby refuses its hearings (\(error.message)); the site calibrates without this beacon until that is mended.")
                        }
                        refused = true
                    } catch {
                        logger.notice("location \(location.name): cannot report its hearings (\(error)); trying again in \(interval)")
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The hearings shared between the scan and the reports.
actor HearingCollector {
    private var hearings: BeaconHearings

    init(_ hearings: BeaconHearings) { self.hearings = hearings }

    func add(_ sighting: Sighting) { hearings.add(sighting, at: Date()) }

    func take() -> [EncounterSighting] { hearings.take() }
}

extension BeaconIdentity {
    /// The proximity UUID of an iBeacon identity.
    var iBeaconUUID: BeaconUUID? {
        guard case let .iBeacon(uuid, _, _) = self else { return nil }
        return uuid
    }
}
