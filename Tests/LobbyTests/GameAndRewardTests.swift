import Foundation
import Testing
@testable import Lobby

@Suite struct GameEvaluationTests {
    @Test func roundGoesToTheSingleHighestScore() {
        #expect(GameEvaluation.roundWinner(["a": 3, "b": 5]) == "b")
        #expect(GameEvaluation.roundWinner(["a": 5, "b": 5]) == nil)
    }

    @Test func gameGoesToMostRoundsWonThenTotal() {
        #expect(GameEvaluation.winner(rounds: [["a": 9, "b": 1], ["a": 1, "b": 2], ["a": 1, "b": 2]]) == "b")
        // One round each and a tie: totals decide (a: 9+1+5=15, b: 1+2+5=8).
        #expect(GameEvaluation.winner(rounds: [["a": 9, "b": 1], ["a": 1, "b": 2], ["a": 5, "b": 5]]) == "a")
        #expect(GameEvaluation.winner(rounds: [["a": 2, "b": 1], ["a": 1, "b": 2]]) == nil)
    }
}

@Suite struct RewardRuleTests {
    typealias U = RewardRule.Unlocks<String>

    @Test func twoPlayerWinnerGainsLoserUnlocksAndLoserLosesSharedNonPersistentOnes() {
        let before: U = [
            "w": ["s1": false, "s2": false],
            "l": ["s1": false, "s2": true, "x": true, "y": false],
        ]
        let after = RewardRule.apply(participants: ["w", "l"], winner: "w", before: before)
        #expect(after["w"] == ["s1": false, "s2": false, "x": false, "y": false, "l": true])
        // s1 was shared and not persistent: lost; s2 shared but persistent: kept.
        #expect(after["l"] == ["s2": true, "x": true, "y": false, "w": true])
    }

    @Test func twoPlayerDrawOnlyMakesThemPersistentUnlocksOfEachOther() {
        let before: U = ["a": ["z": false], "b": ["z": false, "q": false]]
        let after = RewardRule.apply(participants: ["a", "b"], winner: nil, before: before)
        #expect(after["a"] == ["z": false, "b": true])
        #expect(after["b"] == ["z": false, "q": false, "a": true])
    }

    @Test func groupWinnerGainsEveryoneElsesUnlocksAsPersistent() {
        let before: U = ["w": ["p": false], "b": ["p": false, "q": false], "c": ["r": true, "w": false]]
        let after = RewardRule.apply(participants: ["w", "b", "c"], winner: "w", before: before)
        #expect(after["w"] == ["p": true, "q": true, "r": true])
        #expect(after["b"] == before["b"])
        #expect(after["c"] == before["c"])
    }
}

@Suite struct GameTests {
    @Test func scoresAreIdempotentByKey() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        #expect(try await lobby.submit(alice, game: game, round: 1, score: 7, key: "k").created)
        #expect(try await !lobby.submit(alice, game: game, round: 1, score: 7, key: "k").created)
        let error = await #expect(throws: LobbyError.self) { try await lobby.submit(alice, game: game, round: 1, score: 8, key: "other") }
        #expect(error?.code == .scoreAlreadySubmitted)
        let missing = await #expect(throws: LobbyError.self) { try await lobby.submit(alice, game: game, round: 4, score: 8, key: "r4") }
        #expect(missing?.code == .roundNotFound)
        let (carol, _) = try await lobby.player("carol")
        let outsider = await #expect(throws: LobbyError.self) { try await lobby.submit(carol, game: game, round: 1, score: 8, key: "c") }
        #expect(outsider?.kind == .notFound, "another players' game is not found, as one that does not exist")
    }

    @Test func evaluatesWhenEveryoneHasPlayedEveryRound() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let game = try await lobby.openGame(alice, with: [(bob, "bob")])
        _ = try await lobby.submit(alice, game: game, round: 1, score: 1, key: "k\(alice)-0")
        #expect(try await lobby.store.game(alice, id: game).state == .open)
        let finished = try await lobby.play(game, [alice: [1, 9, 9], bob: [5, 1, 1]])
        #expect(finished.state == .finished)
        #expect(finished.winner == "alice")
        #expect(finished.rounds.map(\.winner) == ["bob", "alice", "alice"])
        let late = await #expect(throws: LobbyError.self) { try await lobby.submit(alice, game: game, round: 2, score: 1, key: "late") }
        #expect(late?.code == .scoreAlreadySubmitted)
    }

    @Test func twoPlayerRewardsAreAppliedWithTheEvaluation() async throws {
        let lobby = try await TestLobby()
        let (winner, _) = try await lobby.player("winner")
        let (loser, _) = try await lobby.player("loser")
        let (shared, _) = try await lobby.player("shared")
        let (keep, _) = try await lobby.player("keep")
        // Earlier games leave each with one persistent unlock: winner→shared, loser→keep.
        let g1 = try await lobby.openGame(winner, with: [(shared, "shared")])
        _ = try await lobby.play(g1, [winner: [1, 1, 1], shared: [2, 2, 2]])
        let g2 = try await lobby.openGame(loser, with: [(keep, "keep")])
        _ = try await lobby.play(g2, [loser: [1, 1, 1], keep: [2, 2, 2]])
        // Now winner has shared (persistent), loser has keep (persistent).
        let game = try await lobby.openGame(winner, with: [(loser, "loser")])
        _ = try await lobby.play(game, [winner: [9, 9, 9], loser: [1, 1, 1]])
        let winnerUnlocks = Set(try await lobby.store.unlocked(winner))
        #expect(winnerUnlocks == [
            UnlockedPlayer(username: "shared", persistent: true), UnlockedPlayer(username: "keep", persistent: false),
            UnlockedPlayer(username: "loser", persistent: true),
        ])
        let loserUnlocks = Set(try await lobby.store.unlocked(loser))
        #expect(loserUnlocks == [UnlockedPlayer(username: "keep", persistent: true), UnlockedPlayer(username: "winner", persistent: true)])
        // A rematch the loser wins: the winner-before loses "keep" (non-persistent, shared).
        let rematch = try await lobby.openGame(winner, with: [(loser, "loser")])
        _ = try await lobby.play(rematch, [winner: [1, 1, 1], loser: [9, 9, 9]])
        let afterRematch = Set(try await lobby.store.unlocked(winner))
        #expect(!afterRematch.contains { $0.username == "keep" })
        #expect(afterRematch.contains(UnlockedPlayer(username: "shared", persistent: true)))
    }

    @Test func groupWinnerGainsOthersUnlocksAsPersistent() async throws {
        let lobby = try await TestLobby()
        let ids = try await lobby.players("www", "bbb", "ccc", "friend")
        let (w, b, c, friend) = (ids[0], ids[1], ids[2], ids[3])
        let g1 = try await lobby.openGame(b, with: [(friend, "friend")])
        _ = try await lobby.play(g1, [b: [1, 1, 1], friend: [2, 2, 2]])
        let game = try await lobby.openGame(w, with: [(b, "bbb"), (c, "ccc")])
        let finished = try await lobby.play(game, [w: [9, 9, 9], b: [1, 1, 1], c: [2, 2, 2]])
        #expect(finished.winner == "www")
        #expect(Set(try await lobby.store.unlocked(w)) == [UnlockedPlayer(username: "friend", persistent: true)])
        #expect(Set(try await lobby.store.unlocked(b)) == [UnlockedPlayer(username: "friend", persistent: true)])
    }

    @Test func eventsArePushedAndReadableAfterACursor() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        let live = lobby.store.events.subscribe(playerId: bob)
        try await lobby.see(alice, "bob")
        let invitation = try await lobby.store.invite(alice, usernames: ["bob"])
        var iterator = live.makeAsyncIterator()
        let pushed = await iterator.next()
        #expect(pushed?.kind == .invitationReceived)
        #expect(pushed?.data.game == invitation.id)
        _ = try await lobby.store.accept(bob, invitation: invitation.id)
        let all = try await lobby.store.events(bob, after: 0)
        #expect(all.map(\.kind) == [.invitationReceived, .gameStarted])
        let rest = try await lobby.store.events(bob, after: all[0].cursor)
        #expect(rest.map(\.kind) == [.gameStarted])
        #expect(try await lobby.store.events(alice, after: 0).map(\.kind) == [.invitationAnswered, .gameStarted])
    }
}

@Suite struct SupportTests {
    /// Token digests are plain SHA-256 (the standard vectors), as the lobby's earlier hand-written
    /// digest stored them: sessions in existing databases stay valid.
    @Test func tokenDigestsAreTheStandardSHA256() {
        let hex = { (bytes: Data) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(LobbyStore.tokenHash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(LobbyStore.tokenHash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(LobbyStore.tokenHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func recognisesImagesByTheirSignature() {
        #expect(ImageKind(sniffing: [0xFF, 0xD8, 0xFF, 0xDB]) == .jpeg)
        #expect(ImageKind(sniffing: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(ImageKind(sniffing: Array("GIF89a".utf8)) == nil)
        #expect(ImageKind(sniffing: [UInt8]()) == nil)
    }
}
