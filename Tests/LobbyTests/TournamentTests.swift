import BeaconFrames
import Foundation
import LobbyDatabase
import Minigames
import SensorSamples
import Testing
@testable import Lobby

extension TestLobby {
    /// `player` reports seeing the location's beacon now, which its device (on the air) told the
    /// lobby it advertises.
    func see(_ player: Int64, location: Location) async throws {
        let owner = try #require(try await store.database.read { db in
            try db.fetchValue(Int64.self, "SELECT ownerId FROM location WHERE id = ?", location.id)
        })
        try await store.markOnAir(owner, location: location.id)
        let beacon = try #require(try await store.currentLocationBeacon(location.id, at: clock.now()))
        let receipt = try await store.recordEncounters(reporter: player, [
            EncounterReport(beacon, distance: 3, at: clock.now()),
        ])
        #expect(receipt.recorded == 1, "the location's sighting was not recorded: \(receipt)")
    }

    /// Submits `score` for round `n` of the player's entry with a recording that gives it on the
    /// entry's plan.
    @discardableResult
    func submit(_ player: Int64, tournament: Int64, round n: Int, score: Int, key: String) async throws -> TournamentEntryReceipt {
        let entry = try await store.tournamentEntry(player, tournament: tournament)
        let round = try #require(entry.rounds.first { $0.n == n })
        // Quickdraw's signal is revealed when the round starts; the round then lasts its length.
        var signal: Double?
        if round.game == Quickdraw().name {
            signal = try await store.revealTournamentSignal(player, tournament: tournament, round: n).signalTime
            clock.advance(by: round.duration)
        }
        let recording = try #require(SyntheticRecording.scoring(score, game: round.game, duration: round.duration, signalTime: signal,
                                                                calibration: SensorCalibration()))
        return try await store.submitTournamentScore(player, tournament: tournament, round: n, score: score, key: key, recording: recording)
    }

    func unlocked(_ player: Int64) async throws -> [String: Bool] {
        Dictionary(try await store.unlocked(player).map { ($0.username, $0.persistent) }, uniquingKeysWith: { $0 || $1 })
    }
}

@Suite struct TournamentTests {
    /// 2027-01-15T08:00:00Z, a Friday: the manual clock's start.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aTournamentFromCreationThroughClosingWithRewards() async throws {
        let lobby = try await TestLobby { $0.roundsPerGame = 2 }
        let (owner, _) = try await lobby.player("owner")
        let (alice, bob, carol) = try await (lobby.player("alice").id, lobby.player("bob").id, lobby.player("carol").id)
        let (dave, erin) = try await (lobby.player("dave").id, lobby.player("erin").id)
        // Bob has unlocked Dave, and Carol Erin (each as the other's, from a game they played).
        _ = try await lobby.play(try await lobby.openGame(bob, with: [(dave, "dave")]), [bob: [600, 600], dave: [100, 100]])
        _ = try await lobby.play(try await lobby.openGame(carol, with: [(erin, "erin")]), [carol: [600, 600], erin: [100, 100]])

        // Registering starts a daily, a weekly and a monthly tournament; registering again re-uses it.
        let registered = try await lobby.store.registerLocation(owner, name: "Hall")
        #expect(registered.created)
        let hall = registered.location
        #expect(hall.beacon.major == LocationBeacon.major && hall.beacon.minor == Int(hall.id))
        #expect(Set(hall.tournaments.map(\.period)) == Set(TournamentPeriod.allCases))
        let again = try await lobby.store.registerLocation(owner, name: "hall")
        #expect(!again.created && again.location.id == hall.id && again.location.tournaments == hall.tournaments)
        let taken = await #expect(throws: LobbyError.self) { try await lobby.store.registerLocation(alice, name: "Hall") }
        #expect(taken?.code == .locationNameTaken)
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        #expect(daily.startsAt == Date(timeIntervalSince1970: 1_799_971_200))  // 2027-01-15T00:00:00Z
        #expect(daily.endsAt == daily.startsAt.addingTimeInterval(86400))
        #expect(daily.minigames == ["statue", "statue"])
        #expect(try await lobby.store.settleTournaments() == TournamentSweep(closed: [], created: 0))

        // Three players at the location join; the same minigames for everyone.
        for player in [alice, bob, carol] {
            try await lobby.see(player, location: hall)
            let joined = try await lobby.store.joinTournament(player, tournament: daily.id)
            #expect(joined.created)
            #expect(joined.entry.rounds.map(\.game) == daily.minigames)
        }
        #expect(try await !lobby.store.joinTournament(alice, tournament: daily.id).created, "joining again answers the entry")

        // Alice reaches 900 first, Carol ties her later, Bob scores 700.
        try await lobby.submit(alice, tournament: daily.id, round: 1, score: 500, key: "a1")
        try await lobby.submit(alice, tournament: daily.id, round: 2, score: 400, key: "a2")
        let retried = try await lobby.submit(alice, tournament: daily.id, round: 2, score: 400, key: "a2")
        #expect(!retried.created && retried.entry.total == 900, "a retry counts once")
        let twice = await #expect(throws: LobbyError.self) { try await lobby.submit(alice, tournament: daily.id, round: 2, score: 401, key: "other") }
        #expect(twice?.code == .scoreAlreadySubmitted)
        lobby.clock.advance(by: 600)
        try await lobby.submit(bob, tournament: daily.id, round: 1, score: 300, key: "b1")
        try await lobby.submit(bob, tournament: daily.id, round: 2, score: 400, key: "b2")
        try await lobby.submit(carol, tournament: daily.id, round: 1, score: 450, key: "c1")
        try await lobby.submit(carol, tournament: daily.id, round: 2, score: 450, key: "c2")
        let running = try await lobby.store.tournament(daily.id)
        #expect(running.state == .open && running.winner == nil)
        #expect(running.standings?.map(\.rank) == [1, 1, 3])
        #expect(running.standings?.map(\.player) == ["alice", "carol", "bob"])

        // The window closes: the lobby decides without anyone asking about the tournament.
        lobby.clock.advance(by: daily.endsAt.timeIntervalSince(lobby.clock.now()) + 1)
        let sweep = try await lobby.store.settleTournaments()
        #expect(sweep.closed == [TournamentOutcome(tournament: daily.id, location: hall.id, winner: alice, ranked: [
            .init(player: alice, rank: 1), .init(player: carol, rank: 1), .init(player: bob, rank: 3),
        ])], "only the daily one ended; Alice reached 900 first")
        #expect(sweep.created == 1, "the next day's starts")
        let closed = try await lobby.store.tournament(daily.id)
        #expect(closed.state == .closed)
        #expect(closed.winner == "alice", "equal totals go to whoever reached it first")
        #expect(closed.standings?.map(\.rank) == [1, 1, 3])
        #expect(try await lobby.store.tournamentStandings(daily.id).map(\.total) == [900, 900, 700])
        #expect(try await lobby.store.tournamentsWon(alice) == 1)
        #expect(try await lobby.store.tournamentsWon(carol) == 0)

        // Alice gains the participants' unlocked players for good; nobody loses any.
        let aliceUnlocks = try await lobby.unlocked(alice)
        #expect(aliceUnlocks["dave"] == true && aliceUnlocks["erin"] == true)
        #expect(aliceUnlocks["bob"] == nil && aliceUnlocks["carol"] == nil, "the participants themselves are not among their own unlocks")
        #expect(try await lobby.unlocked(bob) == ["dave": true])
        #expect(try await lobby.unlocked(carol) == ["erin": true])
        let events = try await lobby.store.events(alice, after: 0)
        #expect(events.contains { $0.kind == .tournamentFinished && $0.data.tournament == daily.id && $0.data.winner == "alice" })
        #expect(events.filter { $0.kind == .unlocked }.compactMap(\.data.player).sorted() == ["dave", "erin"])
        #expect(try await lobby.store.events(bob, after: 0).contains { $0.kind == .tournamentFinished && $0.data.winner == "alice" })

        // Closed: no more entries or scores, and a new day's tournament runs.
        let late = await #expect(throws: LobbyError.self) { try await lobby.store.joinTournament(dave, tournament: daily.id) }
        #expect(late?.code == .tournamentClosed)
        let next = try await lobby.store.location(hall.id).tournaments.first { $0.period == .daily }
        #expect(next?.startsAt == daily.endsAt && next?.state == .open && next?.entries == 0)
    }

    @Test func aTournamentDueIsClosedByTheFirstRequestThatTouchesIt() async throws {
        let lobby = try await TestLobby { $0.roundsPerGame = 1 }
        let (owner, _) = try await lobby.player("owner")
        let (alice, _) = try await lobby.player("alice")
        let hall = try await lobby.store.registerLocation(owner, name: "Hall").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        try await lobby.see(alice, location: hall)
        _ = try await lobby.store.joinTournament(alice, tournament: daily.id)
        lobby.clock.advance(by: daily.endsAt.timeIntervalSince(lobby.clock.now()))
        // No sweep ran; the window is over (it does not contain its end), so the score is refused.
        let refused = await #expect(throws: LobbyError.self) { try await lobby.submit(alice, tournament: daily.id, round: 1, score: 10, key: "k") }
        #expect(refused?.code == .tournamentClosed)
        let listed = try await lobby.store.tournaments(location: hall.id)
        #expect(listed.first { $0.id == daily.id }?.state == .closed)
        #expect(listed.first { $0.id == daily.id }?.winner == nil, "an entry that played no round does not win")
        #expect(listed.contains { $0.period == .daily && $0.state == .open && $0.startsAt == daily.endsAt }, "the next day's runs")
    }

    @Test func joiningIsRefusedWhenThePlayerIsNotNearTheLocation() async throws {
        let lobby = try await TestLobby()
        let (owner, _) = try await lobby.player("owner")
        let (alice, _) = try await lobby.player("alice")
        let hall = try await lobby.store.registerLocation(owner, name: "Hall").location
        let cellar = try await lobby.store.registerLocation(owner, name: "Cellar").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        func refusal() async -> LobbyError? {
            await #expect(throws: LobbyError.self) { try await lobby.store.joinTournament(alice, tournament: daily.id) }
        }
        // Never seen.
        #expect(await refusal()?.code == .notNearLocation)
        // Seen another location, and a player standing at this one: neither is this location.
        try await lobby.see(alice, location: cellar)
        try await lobby.see(alice, "owner")
        let error = await refusal()
        #expect(error?.code == .notNearLocation)
        #expect(error?.kind == .forbidden)
        #expect(error?.message.contains("Hall") == true, "\(String(describing: error))")
        // Seen, but longer ago than the encounter window.
        try await lobby.see(alice, location: hall)
        lobby.clock.advance(by: lobby.store.configuration.encounterWindow + 1)
        #expect(await refusal()?.code == .notNearLocation)
        // Seen just now: in.
        try await lobby.see(alice, location: hall)
        #expect(try await lobby.store.joinTournament(alice, tournament: daily.id).created)
        // Unknown ids say so.
        let missing = await #expect(throws: LobbyError.self) { try await lobby.store.joinTournament(alice, tournament: 9999) }
        #expect(missing?.code == .tournamentNotFound)
        let nowhere = await #expect(throws: LobbyError.self) { try await lobby.store.tournaments(location: 9999) }
        #expect(nowhere?.code == .locationNotFound)
    }

    @Test func tournamentScoresAreVerifiedOnTheirRecordings() async throws {
        let lobby = try await TestLobby { $0.roundsPerGame = 1 }
        let (owner, _) = try await lobby.player("owner")
        let (alice, _) = try await lobby.player("alice")
        let hall = try await lobby.store.registerLocation(owner, name: "Hall").location
        let daily = try #require(hall.tournaments.first { $0.period == .daily })
        let recording = try #require(SyntheticRecording.scoring(300, game: "statue", duration: 10, calibration: SensorCalibration()))
        let notEntered = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitTournamentScore(alice, tournament: daily.id, round: 1, score: 300, key: "k", recording: recording)
        }
        #expect(notEntered?.code == .notEntered)
        try await lobby.see(alice, location: hall)
        let entry = try await lobby.store.joinTournament(alice, tournament: daily.id).entry
        #expect(entry.rounds.map(\.game) == ["statue"] && entry.rounds.first?.duration == 10)
        let inflated = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitTournamentScore(alice, tournament: daily.id, round: 1, score: 900, key: "k", recording: recording)
        }
        #expect(inflated?.code == .scoreRefused)
        let wrongGame = try #require(SyntheticRecording.scoring(300, game: "screamer", duration: 5, calibration: SensorCalibration()))
        let mismatch = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitTournamentScore(alice, tournament: daily.id, round: 1, score: 300, key: "k", recording: wrongGame)
        }
        #expect(mismatch?.message.contains("tournament \(daily.id)") == true)
        let noRound = await #expect(throws: LobbyError.self) {
            try await lobby.store.submitTournamentScore(alice, tournament: daily.id, round: 2, score: 300, key: "k2", recording: recording)
        }
        #expect(noRound?.code == .roundNotFound)
        let stored = try await lobby.store.submitTournamentScore(alice, tournament: daily.id, round: 1, score: 300, key: "k", recording: recording)
        #expect(stored.entry.total == 300 && stored.entry.rounds.first?.score == 300)
    }
}

@Suite struct TournamentCalendarTests {
    static func date(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

    @Test func windowsAreDaysWeeksFromMondayAndMonthsInTheLocationsZone() throws {
        let oslo = try #require(TournamentCalendar(identifier: "Europe/Oslo"))
        // 23:30 UTC on Friday 15 January 2027 is already Saturday in Oslo (UTC+1).
        let late = try Self.date("2027-01-15T23:30:00Z")
        #expect(oslo.window(.daily, containing: late) == (try Self.date("2027-01-15T23:00:00Z"), try Self.date("2027-01-16T23:00:00Z")))
        #expect(oslo.window(.weekly, containing: late) == (try Self.date("2027-01-10T23:00:00Z"), try Self.date("2027-01-17T23:00:00Z")))
        #expect(oslo.window(.monthly, containing: late) == (try Self.date("2026-12-31T23:00:00Z"), try Self.date("2027-01-31T23:00:00Z")))
        let utc = TournamentCalendar(timeZone: .gmt)
        #expect(utc.window(.daily, containing: late).start == (try Self.date("2027-01-15T00:00:00Z")))
    }

    @Test func aDaylightSavingChangeMakesThatDaysWindowShorterOrLonger() throws {
        let oslo = try #require(TournamentCalendar(identifier: "Europe/Oslo"))
        let spring = oslo.window(.daily, containing: try Self.date("2027-03-28T12:00:00Z"))
        #expect(spring.end.timeIntervalSince(spring.start) == 23 * 3600)
        let autumn = oslo.window(.daily, containing: try Self.date("2027-10-31T12:00:00Z"))
        #expect(autumn.end.timeIntervalSince(autumn.start) == 25 * 3600)
        // The window holds its start and not its end.
        #expect(oslo.window(.daily, containing: spring.end).start == spring.end)
    }

    @Test func anUnknownTimeZoneIsRefusedWhenRegistering() async throws {
        let lobby = try await TestLobby()
        let (owner, _) = try await lobby.player("owner")
        #expect(TournamentCalendar(identifier: "Mars/Olympus") == nil)
        let error = await #expect(throws: LobbyError.self) { try await lobby.store.registerLocation(owner, name: "Hall", timeZone: "Mars/Olympus") }
        #expect(error?.code == .invalidField && error?.message.hasPrefix("timeZone:") == true)
        let oslo = try await lobby.store.registerLocation(owner, name: "Hall", timeZone: "Europe/Oslo").location
        #expect(oslo.timeZone == "Europe/Oslo")
    }
}
