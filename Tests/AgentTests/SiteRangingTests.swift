import Agent
import BeaconFrames
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

    /// Two locations with site profiles at a live lobby: the nearest one in range is the site, and
    /// when both have gone there is none.
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
        let locations = NearbyLocations(lobby: alice.client, events: AgentEventBus(), deployment: alice.beacon.uuid,
                                        onSite: { site in sites.withLock { $0.append(site) } })
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:0A"))
        func identity(_ location: LobbyLocation) throws -> BeaconFrames.BeaconIdentity { try #require(location.beacon.beaconIdentity) }
        func seen(_ location: LobbyLocation, at distance: Double) throws -> [ProximityEvent] {
            [ProximityEvent(kind: .enter, time: 0, identity: try identity(location), address: address),
             ProximityEvent(kind: .range, time: 0, identity: try identity(location), address: address, distance: distance, zone: .near)]
        }
        func lastSite() -> RangingSite?? { sites.withLock { $0.last } }

        // A location without a profile is no site.
        await locations.handle(try seen(plain, at: 0.5))
        #expect(await eventually { await locations.locations().map(\.name) == ["Plain"] })
        #expect(sites.withLock { $0.isEmpty }, "a location without a site profile changed the ranging")

        await locations.handle(try seen(hall, at: 2))
        #expect(await eventually { lastSite() == .some(RangingSite(location: hall.id, name: "Hall", exponent: 2.35)) })
        await locations.handle(try seen(annex, at: 1))
        #expect(await eventually { lastSite() == .some(RangingSite(location: annex.id, name: "Annex", exponent: 3.1)) })
        await locations.handle([ProximityEvent(kind: .exit, time: 5, identity: try identity(annex), address: address)])
        #expect(lastSite() == .some(RangingSite(location: hall.id, name: "Hall", exponent: 2.35)))
        await locations.handle([ProximityEvent(kind: .exit, time: 6, identity: try identity(hall), address: address)])
        #expect(lastSite() == .some(nil))
        #expect(sites.withLock { $0.count } == 4, "one call per change: \(sites.withLock { $0 })")
    }
}
