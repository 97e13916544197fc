import Foundation
import Testing
@testable import Lobby

@Suite struct InvitationTests {
    @Test func invitesOnlyPlayersCurrentlySeenOrUnlocked() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        try await lobby.player("bob")
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["bob"]) }
        #expect(error?.code == .nobodyInvitable)
        #expect(error?.excluded == [ExcludedInvitee(username: "bob", reason: .notNearby)])
        try await lobby.see(alice, "bob")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob"])
        #expect(invitation.invitees.map(\.username) == ["bob"])
        #expect(invitation.state == .pending)
    }

    @Test func groupInvitationLeavesOutWhoCannotBeInvitedAndSaysWhy() async throws {
        let lobby = try await TestLobby { $0.maximumOpenInvitations = 1 }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        let (dave, _) = try await lobby.player("dave")
        try await lobby.player("erin")
        for name in ["bob", "carol", "dave", "erin"] { try await lobby.see(alice, name) }
        try await lobby.see(dave, "carol")
        _ = try await lobby.store.invite(dave, usernames: ["carol"])  // carol now holds 1 open invitation
        try await lobby.store.block(alice, username: "bob")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob", "carol", "erin", "zed", "alice"])
        // Carol holds as many invitations as she may from new accounts, but alice's account is
        // established: the limit is not hers (new accounts filling it: FairPlayTests).
        #expect(invitation.invitees.map(\.username) == ["carol", "erin"])
        #expect(Set(invitation.excluded) == [
            ExcludedInvitee(username: "bob", reason: .blocked),
            ExcludedInvitee(username: "zed", reason: .unknownPlayer),
            ExcludedInvitee(username: "alice", reason: .yourself),
        ])
        _ = dave
        _ = carol
    }

    @Test func refusesWhenAnOpenGameExistsBetweenTheTwo() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        _ = try await lobby.openGame(alice, with: [(bob, "bob")])
        try await lobby.see(bob, "alice")
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.invite(bob, usernames: ["alice"]) }
        #expect(error?.excluded.first?.reason == .openGameExists)
    }

    @Test func refusesTheInviterAtTheOpenGamesLimit() async throws {
        let lobby = try await TestLobby { $0.maximumOpenGames = 2 }
        let (alice, _) = try await lobby.player("alice")
        for name in ["bob", "carol", "dave"] {
            try await lobby.player(name)
            try await lobby.see(alice, name)
        }
        _ = try await lobby.store.invite(alice, usernames: ["bob"])
        _ = try await lobby.store.invite(alice, usernames: ["carol"])
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["dave"]) }
        #expect(error?.code == .openGameLimitReached)
    }

    @Test func acceptingIsRefusedAtTheOpenGamesLimit() async throws {
        let lobby = try await TestLobby { $0.maximumOpenGames = 1 }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        try await lobby.see(alice, "carol")
        try await lobby.see(bob, "carol")
        let first = try await lobby.store.invite(alice, usernames: ["carol"])
        let second = try await lobby.store.invite(bob, usernames: ["carol"])
        _ = try await lobby.store.accept(carol, invitation: first.id)
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.accept(carol, invitation: second.id) }
        #expect(error?.code == .openGameLimitReached)
    }

    @Test func declineBlocksReinvitingForTheCooldown() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.see(alice, "bob")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob"])
        let declined = try await lobby.store.decline(bob, invitation: invitation.id)
        #expect(declined.state == .cancelled)
        lobby.clock.advance(by: 30 * 60)
        try await lobby.see(alice, "bob")
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["bob"]) }
        #expect(error?.excluded.first?.reason == .declinedRecently)
        lobby.clock.advance(by: 31 * 60)
        try await lobby.see(alice, "bob")
        _ = try await lobby.store.invite(alice, usernames: ["bob"])
    }

    @Test func gameOpensOnceEveryInviteeAnsweredWithThoseWhoAccepted() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let (carol, _) = try await lobby.player("carol")
        try await lobby.see(alice, "bob")
        try await lobby.see(alice, "carol")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob", "carol"])
        #expect(try await lobby.store.accept(bob, invitation: invitation.id).state == .pending)
        #expect(try await lobby.store.decline(carol, invitation: invitation.id).state == .open)
        let game = try await lobby.store.game(alice, id: invitation.id)
        #expect(game.participants == ["alice", "bob"])
        #expect(game.rounds.count == 3)
        #expect(game.rounds.allSatisfy { lobby.store.configuration.enabledMinigames.contains($0.game) })
        // Answering again the same way is a retry, answered; the other answer is refused.
        #expect(try await lobby.store.accept(bob, invitation: invitation.id).state == .open)
        let again = await #expect(throws: LobbyError.self) { try await lobby.store.decline(bob, invitation: invitation.id) }
        #expect(again?.code == .invitationClosed)
        let stranger = await #expect(throws: LobbyError.self) { try await lobby.store.accept(alice, invitation: invitation.id) }
        #expect(stranger?.kind == .forbidden)
    }

    @Test func expiryOpensTheGameWithWhoAcceptedOrCancelsIt() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.player("carol")
        try await lobby.see(alice, "bob")
        try await lobby.see(alice, "carol")
        let group = try await lobby.store.invite(alice, usernames: ["bob", "carol"])
        _ = try await lobby.store.accept(bob, invitation: group.id)
        let (dave, _) = try await lobby.player("dave")
        try await lobby.see(dave, "carol")
        let lonely = try await lobby.store.invite(dave, usernames: ["carol"])
        lobby.clock.advance(by: 24 * 3600 - 1)
        try await lobby.store.expireInvitations()
        #expect(try await lobby.store.game(alice, id: group.id).state == .pending)
        lobby.clock.advance(by: 1)
        try await lobby.store.expireInvitations()
        #expect(try await lobby.store.game(alice, id: group.id).state == .open)
        #expect(try await lobby.store.game(dave, id: lonely.id).state == .cancelled)
        let invitation = try await lobby.store.invitations(dave)
        #expect(invitation.isEmpty)
    }
}

@Suite struct GroupPairTests {
    /// A group game pairs its invitees with each other too, so two invitees who already share a
    /// game cannot both be in a new one.
    @Test func groupInvitationKeepsInviteePairsToOneOpenGame() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.player("carol")
        _ = try await lobby.openGame(bob, with: [(try await lobby.store.authenticate(token: try await lobby.store.logIn(username: "carol", password: "password-123").token), "carol")])
        try await lobby.see(alice, "bob")
        try await lobby.see(alice, "carol")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob", "carol"])
        #expect(invitation.invitees.map(\.username) == ["bob"])
        #expect(invitation.excluded == [ExcludedInvitee(username: "carol", reason: .openGameExists)])
    }
}
