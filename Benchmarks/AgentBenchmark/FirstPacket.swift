import Agent
import BeaconFrames
import Foundation
import LobbyClient
import Proximity
import Radio
import Ranging

/// A registered, logged-in player of the benchmark's lobby.
struct BenchPlayer: Sendable {
    var username: String
    var client: LobbyClient
    var identity: BeaconFrames.BeaconIdentity
    var credentials: Credentials
}

func register(_ username: String, at lobby: String) async throws -> BenchPlayer {
    let base = LobbyClient(baseURL: lobby)
    let profile = try await base.register(username: username, firstName: username.capitalized, lastName: "Bench",
                                          email: "\(username)@example.org", password: "password-123")
    let token = try await base.logIn(username: username, password: "password-123").token
    guard let identity = profile.beacon.beaconIdentity else { throw BenchFailure("\(username) got a beacon out of range") }
    return BenchPlayer(username: username, client: base.authenticated(token), identity: identity,
                       credentials: Credentials(lobby: lobby, username: username, token: token))
}

/// A scanner fed by hand: what is yielded into `feed` is heard, in order.
struct FedScanner: AdvertisementScanner {
    let stream: AsyncStream<Advertisement>

    func scan(_ receive: (Advertisement) async -> Void) async throws {
        for await advertisement in stream { await receive(advertisement) }
    }
}

/// The agent's own path from a first packet to "player nearby", in this process: an
/// advertisement into `LiveProximity` (as `Agent.scan` runs it, range events at 1 s), its enter
/// event into `NearbyPlayers`, the identity through `IdentityResolver` (cache, else the lobby),
/// and the `player_nearby` event on the `AgentEventBus`.
///
/// Each player arrives alone, one advertisement, and the next only once the previous one's
/// event came out: milliseconds from the yield to the event, per player.
func firstPacketLatencies(of players: [BenchPlayer], resolver: IdentityResolver) async throws -> [Double] {
    let bus = AgentEventBus()
    var events = bus.subscribe().makeAsyncIterator()
    let nearby = NearbyPlayers(resolver: resolver, events: bus)
    let (stream, feed) = AsyncStream<Advertisement>.makeStream()
    let pipeline = LiveProximity(scanner: FedScanner(stream: stream), configuration: RangingConfiguration(rangeInterval: 1))
    let running = Task {
        try await withThrowingDiscardingTaskGroup { group in
            // Resolves the identities, as the agent's service does.
            group.addTask { await nearby.run() }
            try await pipeline.run { update in
                if !update.events.isEmpty { await nearby.handle(update.events) }
            }
            group.cancelAll()
        }
    }
    defer { feed.finish(); running.cancel() }
    let clock = ContinuousClock()
    let began = clock.now
    var latencies: [Double] = []
    for (index, player) in players.enumerated() {
        guard let data = PlayerIdentity(username: player.username, beacon: player.identity).advertisingPayload?.advertisingData else {
            throw BenchFailure("\(player.username) has no iBeacon payload")
        }
        let wanted = player.identity.description
        let advertisement = Advertisement(time: began.duration(to: clock.now).seconds,
                                          address: BluetoothAddress(0xC0, 0xFF, 0xEE, 0, UInt8(index >> 8), UInt8(index & 0xFF)),
                                          addressType: .random, rssi: -65, data: data)
        let sent = clock.now
        feed.yield(advertisement)
        while true {
            guard let event = await events.next() else { throw BenchFailure("the event bus ended") }
            if event.kind == .playerNearby, event.beacon == wanted {
                guard event.player == player.username else { throw BenchFailure("\(wanted) resolved to \(event.player ?? "nobody"), not \(player.username)") }
                break
            }
        }
        latencies.append(sent.duration(to: clock.now).milliseconds)
    }
    return latencies
}
