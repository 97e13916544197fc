import BeaconFrames
import Foundation
import LobbyClient
import Logging
import Radio

/// Where a location's beacon stands on its owner's site (`nearplay beacon --site --position`).
public struct BeaconPlacement: Sendable, Equatable {
    public var site: String
    public var x: Double
    public var y: Double

    public init(site: String, x: Double, y: Double) {
        self.site = site
        self.x = x
        self.y = y
    }
}

extension LocationBeaconDevice {
    /// Scans and reports what the device heard of other location beacons every `interval` until
    /// cancelled (``BeaconHearings``).
    ///
    /// - A scan that ends or fails is started again after a growing pause (up to a minute), and
    ///   said once; the beacon keeps advertising meanwhile.
    /// - A lobby that is away is told at the next turn, said once per outage. The readings of the
    ///   turn are dropped: exchanges need both directions within two minutes, so old ones would
    ///   pair with nothing.
    /// - A lobby that says the location is not placed (409) is given `placement` again, if there
    ///   is one; other refusals are said once, with what to do, since the site then calibrates
    ///   without this beacon.
    static func reportHearings(_ location: MarkedLocation, session: Credentials, scanner: any AdvertisementScanner,
                               placement: BeaconPlacement?, every interval: Duration, logger: Logger) async throws {
        let filter = BeaconHearings(locationUUID: location.beaconKey?.beacon(.location).uuid,
                                    staticUUID: location.beacon.iBeaconUUID)
        let collected = HearingCollector(filter)
        var client = LobbyClient(baseURL: location.lobby).authenticated(session.token)
        client.timeout = .seconds(5)
        let lobby = client
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var backoff = Backoff(first: .seconds(1), limit: .seconds(60))
                while !Task.isCancelled {
                    do {
                        try await scanner.scan { advertisement in
                            // Players' identities are dropped here, before they go anywhere.
                            guard let sighting = Sighting(advertisement), filter.accepts(sighting) else { return }
                            await collected.add(sighting)
                        }
                        guard !Task.isCancelled else { return }
                        logger.notice("location \(location.name): scanning ended; listening again in \(backoff.delay)")
                    } catch is CancellationError {
                        return
                    } catch {
                        logger.error("location \(location.name): scanning failed (\(error)); it keeps advertising and listens again in \(backoff.delay)")
                    }
                    try await backoff.wait()
                }
            }
            group.addTask {
                var failing = false, refused = false
                while !Task.isCancelled {
                    try await Task.sleep(for: interval)
                    let hearings = await collected.take()
                    guard !hearings.isEmpty else { continue }
                    do {
                        let receipt = try await lobby.reportHearings(location: location.id, hearings)
                        if failing || refused { logger.notice("location \(location.name): the lobby takes its hearings again") }
                        (failing, refused) = (false, false)
                        logger.debug("location \(location.name): reported \(hearings.count) hearings, \(receipt.recorded) recorded, \(receipt.exchanges) exchanges")
                    } catch let error as LobbyClientError where error.status == 409 && placement != nil {
                        if let placement {
                            logger.notice("location \(location.name): the lobby no longer has it placed; placing it on \(placement.site) again")
                            _ = try? await lobby.placeLocation(location.id, site: placement.site, x: placement.x, y: placement.y)
                        }
                    } catch let error as LobbyClientError where error.status == 429 {
                        if !failing { logger.notice("location \(location.name): the lobby asks it to report less often (\(error.message)); raise --hearing-interval") }
                        failing = true
                    } catch let error as LobbyClientError where error.status == 401 || error.status == 404 {
                        if !refused {
                            logger.error("location \(location.name): the lobby refuses its hearings (\(error.message)); the site calibrates without this beacon: run `nearplay login` as the location's owner and restart the beacon.")
                        }
                        refused = true
                    } catch let error as LobbyClientError where (400..<500).contains(error.status) {
                        if !refused {
                            logger.error("location \(location.name): the lobby refuses its hearings (\(error.message)); the site calibrates without this beacon until a newer nearplay reports what this lobby takes.")
                        }
                        refused = true
                    } catch {
                        if !failing { logger.notice("location \(location.name): cannot report its hearings (\(error)); trying again every \(interval)") }
                        failing = true
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
