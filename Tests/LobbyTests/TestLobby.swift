import Foundation
import Lobby

/// A store in its own temporary folder with a manual clock and cheap password hashing.
final class TestLobby {
    var beacons: [String: BeaconIdentity] = [:]
    let store: LobbyStore
    let clock: ManualClock
    let folder: URL

    init(_ configure: (inout LobbyConfiguration) -> Void = { _ in }) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lobby-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = LobbyConfiguration(bcryptCost: 4)
        configure(&configuration)
        clock = ManualClock()
        store = try LobbyStore(path: folder.appendingPathComponent("lobby.sqlite").path, configuration: configuration, clock: clock)
    }

    /// Registers `username` and returns its id and beacon.
    @discardableResult
    func player(_ username: String) async throws -> (id: Int64, player: Player) {
        let player = try await store.register(Registration(
            username: username, firstName: "First", lastName: "Last", email: "\(username)@example.org", password: "password-123"))
        beacons[username] = player.beacon
        let session = try await store.logIn(username: username, password: "password-123")
        return (try await store.authenticate(token: session.token), player)
    }

    /// Registers several players; returns their ids in order.
    func players(_ usernames: String...) async throws -> [Int64] {
        var ids: [Int64] = []
        for name in usernames { ids.append(try await player(name).id) }
        return ids
    }

    /// `observer` reports seeing `seen` now.
    func see(_ observer: Int64, _ seenName: String) async throws {
        let seen = try await beacon(of: seenName)
        _ = try await store.recordEncounters(reporter: observer, [
            Sighting(uuid: seen.uuid, major: seen.major, minor: seen.minor, distance: 1, at: clock.now()),
        ])
    }

    func beacon(of username: String) async throws -> BeaconIdentity {
        beacons[username]!
    }

    /// Invites, has everybody accept, and returns the open game's id.
    func openGame(_ inviter: Int64, with invitees: [(id: Int64, name: String)]) async throws -> Int64 {
        for invitee in invitees { try await see(inviter, invitee.name) }
        let invitation = try await store.invite(inviter, usernames: invitees.map(\.name))
        for invitee in invitees { _ = try await store.accept(invitee.id, invitation: invitation.id) }
        return invitation.id
    }

    /// Plays every round with the given scores per player id (same score each round).
    func play(_ game: Int64, _ scores: [Int64: [Int]]) async throws -> Game {
        for (player, perRound) in scores {
            for (index, score) in perRound.enumerated() {
                _ = try await store.submitScore(player, game: game, round: index + 1, score: score, key: "k\(player)-\(index)").game
            }
        }
        return try await store.game(scores.keys.first!, id: game)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}
