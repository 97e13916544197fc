import Agent
import BeaconFrames
import BusTestSupport
import Foundation
import LobbyClient
import Ranging
import Synchronization
import Testing

/// The agent ranges with a calibrated site's exponent while the site is in range.
@Suite struct SiteRangingTests {
    @Test func aSiteInRangeSetsTheExponentAndLeavingItRestoresTheDevicesOwn() {
        let ranging = SiteRanging(own: .logDistance(exponent: 2.6))
        #expect(ranging.distanceModel.model == .logDistance(exponent: 2.6))
        let hall = RangingSite(location: 3, name: "Hall", exponent: 2.1)
        #expect(ranging.setSite(hall) == .logDistance(exponent: 2.1))
        #expect(ranging.distanceModel.model == .logDistance(exponent: 2.1) && ranging.site == hall)
        // A new own profile while at the site waits until the site is out of range.
        ranging.setOwn(.logDistance(exponent: 3))
        #expect(ranging.distanceModel.model == .logDistance(exponent: 2.1))
        #expect(ranging.setSite(nil) == .logDistance(exponent: 3) && ranging.site == nil)
        // An exponent no lobby would accept is not used.
        #expect(ranging.setSite(RangingSite(location: 4, name: "Odd", exponent: 40)) == .logDistance(exponent: 3))
        #expect(ranging.site == nil)
    }

    /// Locations with site profiles at a live lobby: the nearest one in range (by path loss) is
    /// the site; when the calibrated ones have gone there is none; a profile published while its
    /// location is in range is picked up at the next look-up.
    @Test(.timeLimit(.minutes(2))) func theNearestCalibratedLocationInRangeIsTheSite() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let owner = try await register("owner", at: lobby.url)
        let alice = try await register("alice", at: lobby.url)
        let hall = try await owner.client.registerLocation(name: "Hall")
        let annex = try await owner.client.registerLocation(name: "Annex")
        let plain = try await owner.client.registerLocation(name: "Plain")
        _ = try await owner.client.publishSiteProfile(location: hall.id, exponent: 2.35, distances: [1, 3], readings: 120)
        _ = try await owner.client.publishSiteProfile(location: annex.id, exponent: 3.1, distances: [1, 3], readings: 90)

        let sites = Mutex<[RangingSite?]>([])
        let locations = NearbyLocations(lobby: alice.client, events: AgentEventBus(), deployment: alice.beacon.uuid, refreshInterval: 0.3,
                                        onSite: { site in sites.withLock { $0.append(site) } })
        // Its lookups run as children of its run(), which the agent runs as a service.
        let lookups = Task { await locations.run() }
        defer { lookups.cancel() }
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:0A"))
        func identity(_ location: LobbyLocation) throws -> BeaconFrames.BeaconIdentity { try #require(location.beacon.beaconIdentity) }
        /// A range event `loss` dB below the 1 m power (the distance it carries is made up: the
        /// choice must not depend on it).
        func range(_ location: LobbyLocation, loss: Double) throws -> ProximityEvent {
            ProximityEvent(kind: .range, time: 0, identity: try identity(location), address: address, filteredRSSI: -59 - loss,
                           distance: 1, zone: .near, measuredPower: -59)
        }
        func seen(_ location: LobbyLocation, loss: Double) throws -> [ProximityEvent] {
            [ProximityEvent(kind: .enter, time: 0, identity: try identity(location), address: address), try range(location, loss: loss)]
        }
        func lastSite() -> RangingSite?? { sites.withLock { $0.last } }
        let hallSite = RangingSite(location: hall.id, name: "Hall", exponent: 2.35)

        // A location without a profile is no site, however near.
        await locations.handle(try seen(plain, loss: 1))
        #expect(await eventually { await locations.locations().map(\.name) == ["Plain"] })
        #expect(sites.withLock { $0.isEmpty }, "a location without a site profile changed the ranging")

        await locations.handle(try seen(hall, loss: 12))
        #expect(await eventually { lastSite() == .some(hallSite) })
        await locations.handle(try seen(annex, loss: 6))
        #expect(await eventually { lastSite() == .some(RangingSite(location: annex.id, name: "Annex", exponent: 3.1)) })
        await locations.handle([ProximityEvent(kind: .exit, time: 5, identity: try identity(annex), address: address)])
        #expect(lastSite() == .some(hallSite))
        await locations.handle([ProximityEvent(kind: .exit, time: 6, identity: try identity(hall), address: address)])
        #expect(lastSite() == .some(nil))

        // Plain's owner calibrates it while Alice is there: her next look-up finds the profile.
        _ = try await owner.client.publishSiteProfile(location: plain.id, exponent: 2.0, distances: [1, 3], readings: 60)
        let found = try await eventually {
            await locations.handle([try range(plain, loss: 1)])
            return lastSite() == .some(RangingSite(location: plain.id, name: "Plain", exponent: 2.0))
        }
        #expect(found, "\(sites.withLock { $0 })")
        #expect(sites.withLock { $0.count } == 5, "one call per change: \(sites.withLock { $0 })")
    }
}
