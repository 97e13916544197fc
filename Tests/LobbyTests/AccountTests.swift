import BeaconFrames
import Foundation
import Testing
@testable import Lobby

@Suite struct AccountTests {
    @Test func registersWithAUniqueBeaconUnderTheDeploymentUUID() async throws {
        let lobby = try await TestLobby()
        let alice = try await lobby.player("alice").player
        let bob = try await lobby.player("bob").player
        #expect(alice.beacon.uuid == lobby.store.configuration.deploymentUUID)
        #expect(alice.beacon != bob.beacon)
        #expect(alice.email == "alice@example.org")
    }

    @Test func allocatesDistinctBeaconsUnderConcurrentRegistrations() async throws {
        let lobby = try await TestLobby()
        let store = lobby.store
        let beacons = try await withThrowingTaskGroup(of: BeaconIdentity.self) { group in
            for i in 0..<40 {
                group.addTask {
                    try await store.register(Registration(
                        username: "p\(i)xx", firstName: "P", lastName: "Q", email: "p\(i)@example.org", password: "password-123")).beacon
                }
            }
            return try await group.reduce(into: [BeaconIdentity]()) { $0.append($1) }
        }
        #expect(Set(beacons).count == 40)
    }

    /// Usernames are unique whatever their case; e-mail addresses are not (issue 21: refusing a
    /// taken one told anyone whether an address had an account).
    @Test func refusesTakenUsernamesWhateverTheirCaseButNotTakenEmails() async throws {
        let lobby = try await TestLobby()
        try await lobby.player("alice")
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.register(Registration(username: "ALICE", firstName: "A", lastName: "B", email: "x@example.org", password: "password-123"))
        }
        #expect(error?.code == .usernameTaken)
        let second = try await lobby.store.register(Registration(username: "alice2", firstName: "A", lastName: "B", email: "Alice@Example.org", password: "password-123"))
        #expect(second.username == "alice2" && second.email.lowercased() == "alice@example.org")
    }

    @Test(arguments: [
        ("ab", "a@example.org", "password-123", "username"),
        (String(repeating: "a", count: 33), "a@example.org", "password-123", "username"),
        ("bad name", "a@example.org", "password-123", "username"),
        ("alice", "not-an-email", "password-123", "email"),
        ("alice", "a@example.org", "short", "password"),
    ])
    func refusesInvalidRegistrationsNamingTheField(username: String, email: String, password: String, field: String) async throws {
        let lobby = try await TestLobby()
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.register(Registration(username: username, firstName: "A", lastName: "B", email: email, password: password))
        }
        #expect(error?.kind == .invalidInput)
        #expect(error?.message.hasPrefix(field) == true)
    }

    @Test func refusesAWrongPasswordAndAnUnknownToken() async throws {
        let lobby = try await TestLobby()
        try await lobby.player("alice")
        await #expect(throws: LobbyError.badCredentials) { try await lobby.store.logIn(username: "alice", password: "wrong-password") }
        await #expect(throws: LobbyError.badToken) { try await lobby.store.authenticate(token: "nope") }
    }

    @Test func sessionsExpire() async throws {
        let lobby = try await TestLobby { $0.sessionLifetime = 3600 }
        try await lobby.player("alice")
        let session = try await lobby.store.logIn(username: "alice", password: "password-123")
        _ = try await lobby.store.authenticate(token: session.token)
        lobby.clock.advance(by: 3601)
        await #expect(throws: LobbyError.badToken) { try await lobby.store.authenticate(token: session.token) }
    }

    @Test func editsNamesAndPasswordAndANewPasswordEndsSessions() async throws {
        let lobby = try await TestLobby()
        let (id, _) = try await lobby.player("alice")
        let session = try await lobby.store.logIn(username: "alice", password: "password-123")
        let other = try await lobby.store.logIn(username: "alice", password: "password-123")
        let updated = try await lobby.store.updatePlayer(id, PlayerChanges(firstName: "Alicia"))
        #expect(updated.firstName == "Alicia")
        #expect(updated.username == "alice")
        try await lobby.store.changePassword(id, current: "password-123", new: "new-password-1", session: session.token)
        for token in [session.token, other.token] {
            await #expect(throws: LobbyError.badToken) { try await lobby.store.authenticate(token: token) }
        }
        _ = try await lobby.store.logIn(username: "alice", password: "new-password-1")
    }

    @Test func aPasswordChangeNeedsTheCurrentPasswordAndALiveSession() async throws {
        let lobby = try await TestLobby()
        let (id, _) = try await lobby.player("alice")
        let session = try await lobby.store.logIn(username: "alice", password: "password-123")
        let wrong = await #expect(throws: LobbyError.self) {
            try await lobby.store.changePassword(id, current: "guessed-password", new: "new-password-1", session: session.token)
        }
        #expect(wrong?.code == .wrongCurrentPassword)
        _ = try await lobby.store.authenticate(token: session.token)
        try await lobby.store.changePassword(id, current: "password-123", new: "new-password-1", session: session.token)
        // A second change racing on the same token finds its session ended by the first.
        await #expect(throws: LobbyError.badToken) {
            try await lobby.store.changePassword(id, current: "new-password-1", new: "new-password-2", session: session.token)
        }
    }

    @Test func acceptsPNGAndJPEGPhotosCheckedByTheirBytes() async throws {
        let lobby = try await TestLobby()
        let (id, _) = try await lobby.player("alice")
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        let player = try await lobby.store.setPhoto(id, bytes: png)
        #expect(player.photoURL?.hasPrefix("/v1/players/alice/photo") == true)
        #expect(try await lobby.store.photo(viewer: id, username: "alice").contentType == "image/png")
        _ = try await lobby.store.setPhoto(id, bytes: Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2]))
        #expect(try await lobby.store.photo(viewer: id, username: "alice").contentType == "image/jpeg")
    }

    @Test func refusesAPhotoThatIsNotAnImageOrTooLarge() async throws {
        let lobby = try await TestLobby { $0.maximumPhotoBytes = 1000 }
        let (id, _) = try await lobby.player("alice")
        let notImage = await #expect(throws: LobbyError.self) { try await lobby.store.setPhoto(id, bytes: Data("GIF89a...".utf8)) }
        #expect(notImage?.code == .notAnImage)
        var big = Data([0xFF, 0xD8, 0xFF])
        big.append(Data(count: 1000))
        let tooLarge = await #expect(throws: LobbyError.self) { try await lobby.store.setPhoto(id, bytes: big) }
        #expect(tooLarge?.code == .photoTooLarge)
    }

    @Test func deletingAnonymisesButGamesKeepADeletedPlayerReference() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        _ = try await lobby.submit(alice, game: game, round: 1, score: 10, key: "a1")
        let beacon = try await lobby.beacon(of: "bob")
        try await lobby.store.deletePlayer(bob)

        await #expect(throws: LobbyError.badCredentials) { try await lobby.store.logIn(username: "bob", password: "password-123") }
        _ = try await lobby.submit(alice, game: game, round: 2, score: 10, key: "a2")
        _ = try await lobby.submit(alice, game: game, round: 3, score: 10, key: "a3")
        let view = try await lobby.store.game(alice, id: game)
        #expect(view.participants.contains(DeletedPlayer.name(id: bob)))
        #expect(!view.participants.contains("bob"))
        // Bob forfeited his rounds (0 each), so Alice's last score ended the game.
        #expect(view.state == .finished)
        #expect(view.winner == "alice")
        await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: beacon)
        }
        // The username stays reserved (so nobody passes for bob at once); the email is free.
        let reserved = await #expect(throws: LobbyError.self) { try await lobby.player("bob") }
        #expect(reserved?.code == .usernameTaken)
        _ = try await lobby.store.register(Registration(
            username: "robert", firstName: "Robert", lastName: "Last", email: "bob@example.org", password: "password-123"))
    }
}
