import Agent
import BeaconFrames
import Foundation
import Testing

/// Every kind of agent event, encoded: the JSON `nearplay events --json` printed, and the
/// sentence `nearplay events` printed, before the events became an enum (captured from the
/// struct of 22 optionals they replace), byte for byte.
@Suite struct AgentEventEncodingTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000.25)

    /// One event of each kind, in ``AgentEvent/Kind`` order.
    static var oneOfEach: [AgentEvent] {
        let t = Self.time
        let bob = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2")!
        let hall = BeaconIdentity("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/3")!
        let tournaments: [AgentEvent.RunningTournament] = [.init(id: 7, period: "daily", endsAt: Date(timeIntervalSince1970: 1_790_035_200)),
                                                           .init(id: 8, period: "weekly", endsAt: Date(timeIntervalSince1970: 1_790_294_400))]
        return [
            .playerNearby(.init(player: "bob", name: "Bob Builder", beacon: bob, distance: 7.806, interval: 5.2...11.04, ranging: .twoWay, zone: .far), at: t),
            .playerMoved(.init(player: "bob", name: "Bob Builder", beacon: bob, distance: 2.5, ranging: .oneWay, zone: .near), at: t),
            .playerGone(player: "bob", name: "Bob Builder", beacon: bob, at: t),
            .invitationReceived(from: "bob", game: 7, at: t),
            .invitationAnswered(by: "carol", game: 7, response: .accepted, at: t),
            .invitationExpired(game: 7, at: t),
            .gameStarted(game: 7, plan: "alice vs bob: statue, shaker, quickdraw", at: t),
            .gameCancelled(game: 7, at: t),
            .roundStarting(.game(7), round: 1, minigame: .statue, instructions: "Hold still (10 s), starting in 3 s", at: t),
            .roundPlayed(.tournament(3), round: 2, minigame: .quickdraw, score: 870, at: t),
            .roundFinished(game: 7, round: 2, scores: ["bob": 400, "alice": 880], winner: "alice", at: t),
            .gameFinished(game: 7, winner: "alice", at: t),
            .unlocked(player: "bob", persistent: true, at: t),
            .unlockLost(player: "bob", at: t),
            .achievement(title: "First win", at: t),
            .queued(operation: "invitation of bob", at: t),
            .sent(operation: "invitation of bob", at: t),
            .refused(operation: "answer to invitation 7", reason: "The invitation expired.", at: t),
            .lobbyConnected(at: t),
            .lobbyDisconnected(reason: "connection refused", at: t),
            .location(.init(location: 3, name: "Hall \"A\"", beacon: hall, distance: 1.234, zone: .near, tournaments: tournaments), at: t),
            .locationGone(location: 3, name: "Hall \"A\"", beacon: hall, at: t),
            .tournamentFinished(tournament: 3, winner: "alice", at: t),
        ]
    }

    static let lines = [
        #"{"t":"2026-09-21T14:13:20.250Z","event":"player_nearby","player":"bob","name":"Bob Builder","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","distance_m":7.81,"distance_lo_m":5.20,"distance_hi_m":11.04,"ranging":"two-way","zone":"far"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"player_moved","player":"bob","name":"Bob Builder","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","distance_m":2.50,"ranging":"one-way","zone":"near"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"player_gone","player":"bob","name":"Bob Builder","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"invitation_received","player":"bob","game":7}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"invitation_answered","player":"carol","game":7,"response":"accepted"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"invitation_expired","game":7}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"game_started","game":7,"message":"alice vs bob: statue, shaker, quickdraw"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"game_cancelled","game":7}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"round_starting","game":7,"round":1,"minigame":"statue","message":"Hold still (10 s), starting in 3 s"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"round_played","tournament":3,"round":2,"minigame":"quickdraw","score":870}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"round_finished","game":7,"round":2,"scores":{"alice":880,"bob":400},"winner":"alice"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"game_finished","game":7,"winner":"alice"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"unlocked","player":"bob","persistent":true}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"unlock_lost","player":"bob"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"achievement","message":"First win"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"queued","operation":"invitation of bob"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"sent","operation":"invitation of bob"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"refused","operation":"answer to invitation 7","message":"The invitation expired."}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"lobby_connected"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"lobby_disconnected","message":"connection refused"}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"location","name":"Hall \"A\"","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/3","distance_m":1.23,"zone":"near","location":3,"tournaments":[{"id":7,"period":"daily","ends_at":"2026-09-22T00:00:00.000Z"},{"id":8,"period":"weekly","ends_at":"2026-09-25T00:00:00.000Z"}]}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"location_gone","name":"Hall \"A\"","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/0/3","location":3}"#,
        #"{"t":"2026-09-21T14:13:20.250Z","event":"tournament_finished","tournament":3,"winner":"alice"}"#,
    ]

    static let sentences = [
        #"Bob Builder (bob) is nearby, 7.8 m (5.2–11.0) (far)"#,
        #"Bob Builder (bob) is now 2.5 m away (near)"#,
        #"Bob Builder (bob) is gone"#,
        #"bob invites you to game 7"#,
        #"carol accepted game 7"#,
        #"the invitation to game 7 expired"#,
        #"game 7 started: alice vs bob: statue, shaker, quickdraw"#,
        #"game 7 was cancelled"#,
        #"round 1 of game 7: statue — Hold still (10 s), starting in 3 s"#,
        #"you played round 2 (quickdraw) of tournament 3: 870 points"#,
        #"round 2 of game 7: alice 880, bob 400, won by alice"#,
        #"game 7 finished: alice won"#,
        #"bob unlocked for good"#,
        #"bob is locked again"#,
        #"achievement unlocked: First win"#,
        #"queued invitation of bob"#,
        #"sent invitation of bob"#,
        #"the lobby refused answer to invitation 7: The invitation expired."#,
        #"connected to the lobby"#,
        #"lost the lobby: connection refused"#,
        #"at Hall "A", 1.2 m: daily tournament 7, weekly tournament 8 (`nearplay join ID`)"#,
        #"left Hall "A""#,
        #"tournament 3 finished: alice won"#,
    ]

    @Test func everyKindEncodesAsBefore() throws {
        let events = Self.oneOfEach
        #expect(events.map(\.kind) == AgentEvent.Kind.allCases)
        for (event, line) in zip(events, Self.lines) {
            #expect(event.jsonLine == line)
        }
    }

    @Test func everyKindReadsBackAsItWasWritten() throws {
        for event in Self.oneOfEach {
            #expect(try JSONDecoder().decode(AgentEvent.self, from: Data(event.jsonLine.utf8)).jsonLine == event.jsonLine, "\(event.kind)")
        }
    }

    @Test func everyKindReadsAsBeforeForPeople() {
        for (event, sentence) in zip(Self.oneOfEach, Self.sentences) {
            #expect(event.sentence == sentence)
        }
    }

    /// An event without a field its kind needs is not an event of that kind.
    @Test func refusesAKindWithoutWhatItCarries() {
        for line in [#"{"t":"2026-09-21T14:13:20.250Z","event":"round_played","round":2,"minigame":"quickdraw","score":870}"#,
                     #"{"t":"2026-09-21T14:13:20.250Z","event":"player_gone","player":"bob"}"#,
                     #"{"t":"2026-09-21T14:13:20.250Z","event":"refused","operation":"block of carol"}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(AgentEvent.self, from: Data(line.utf8)) }
        }
    }
}
