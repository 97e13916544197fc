import Agent
import BeaconFrames
import BusTestSupport
import Foundation
import LobbyClient
import Testing

/// Beacon identities to players through a live lobby, with the agent's cache in front.
@Suite(.serialized) struct IdentityResolverTests {
    @Test(.timeLimit(.minutes(5))) func resolvesCachesForgetsAndHidesBlockedPlayers() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        let carol = try await register("carol", at: lobby.url)
        let store = try AgentStore(directory: folder.path + "/state")
        let clock = ManualTime(1000)
        var client = alice.client
        client.timeout = .seconds(2)   // a lobby that is gone is found out quickly
        let resolver = IdentityResolver(store: store, lobby: client, ttl: 600, negativeTTL: 60, now: { clock.now })
        let bobIdentity = try #require(bob.beacon.beaconIdentity)
        let nobody = BeaconIdentity.iBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 65000, minor: 1)
        let foreign = BeaconIdentity.iBeacon(uuid: BeaconUUID("11111111-2222-3333-4444-555555555555")!, major: 1, minor: 1)

        #expect(await resolver.resolve(bobIdentity) == .player(ResolvedPlayer(username: "bob", firstName: "Bob", lastName: "Tester")))
        #expect(await resolver.resolve(nobody) == .nobody)
        #expect(await resolver.resolve(foreign) == .nobody)
        #expect(await resolver.resolve(.eddystone(BeaconUUID(high: 1, low: 2))) == .nobody)

        // With the lobby gone, what is cached still answers (from the store, for a new resolver too).
        try await blocking { lobby.stop() }
        let fresh = IdentityResolver(store: store, lobby: client, ttl: 600, negativeTTL: 60, now: { clock.now })
        #expect(await fresh.resolve(bobIdentity) == .player(ResolvedPlayer(username: "bob", firstName: "Bob", lastName: "Tester")))
        #expect(await fresh.resolve(nobody) == .nobody)
        // Not cached and no lobby: unavailable, and not remembered as anything.
        let carolIdentity = try #require(carol.beacon.beaconIdentity)
        #expect(await fresh.resolve(carolIdentity) == .unavailable)

        // Past the negative TTL the lobby is asked again; past the positive one too.
        try await blocking { try lobby.start() }
        clock.now += 61
        #expect(await fresh.resolve(carolIdentity) == .player(ResolvedPlayer(username: "carol", firstName: "Carol", lastName: "Tester")))
        // Bob blocks alice: once the cache expires, bob is nobody to alice.
        try await bob.client.block("alice")
        #expect(await fresh.resolve(bobIdentity) != .nobody) // still cached
        clock.now += 601
        #expect(await fresh.resolve(bobIdentity) == .nobody)
        // Forgetting drops a player at once.
        await fresh.forget(username: "carol")
        try await blocking { lobby.stop() }
        #expect(await fresh.resolve(carolIdentity) == .unavailable)
    }

    /// A room of beacons with the deployment's UUID that belong to nobody spends the lobby's
    /// hourly budget of unknown identities (100); past it the lobby refuses (429) what it would
    /// have answered 404. The agent takes that refusal as nobody until its negative cache
    /// expires, so each such identity is asked about once a minute, not every 3 s.
    @Test(.timeLimit(.minutes(5))) func aSpentGuessBudgetCountsAsNobodyUntilTheNegativeCacheExpires() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let store = try AgentStore(directory: folder.path + "/state")
        let clock = ManualTime(1000)
        let resolver = IdentityResolver(store: store, lobby: alice.client, ttl: 600, negativeTTL: 60, now: { clock.now })
        func unknown(_ minor: UInt16) -> BeaconIdentity {
            .iBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 65000, minor: minor)
        }
        for minor: UInt16 in 1...100 { #expect(await resolver.resolve(unknown(minor)) == .nobody) }
        // The 101st is refused by the lobby: still nobody, and remembered as such.
        do {
            _ = try await alice.client.resolve(unknown(500))
            Issue.record("the lobby answered past its budget of unknown identities")
        } catch let error as LobbyClientError {
            #expect(error.status == 429 && error.code == .tooManyUnknownIdentities, "\(error)")
        }
        #expect(await resolver.resolve(unknown(101)) == .nobody)
        let misses = await resolver.cacheMisses
        #expect(await resolver.resolve(unknown(101)) == .nobody)
        #expect(await resolver.cacheMisses == misses, "a refused identity was asked about again at once")
        // Once the negative cache expires it is asked again.
        clock.now += 61
        #expect(await resolver.resolve(unknown(101)) == .nobody)
        #expect(await resolver.cacheMisses == misses + 1)
    }

    @Test(.timeLimit(.minutes(5))) func concurrentQuestionsShareOneRequestAndWarmHitsAreFast() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        let store = try AgentStore(directory: folder.path + "/state")
        let resolver = IdentityResolver(store: store, lobby: alice.client, ttl: 600, negativeTTL: 60)
        let identity = try #require(bob.beacon.beaconIdentity)
        let answers = await withTaskGroup(of: IdentityResolver.Answer.self) { group in
            for _ in 0..<20 { group.addTask { await resolver.resolve(identity) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 20)
        #expect(Set(answers.map { "\($0)" }).count == 1)
        #expect(answers.first.map { if case .player(let p) = $0 { p.username == "bob" } else { false } } == true)
    }
}

/// A clock the test moves by hand.
final class ManualTime: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Double
    init(_ start: Double) { value = start }
    var now: Double {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
