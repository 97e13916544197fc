import BeaconFrames
import Foundation
import GRDB
import Testing
@testable import Lobby

/// Issue 21, fair play: "met" and "was there" are no longer claims anyone can make. An encounter
/// or a resolution must name an identity someone advertises now (a player whose agent is on the
/// air, a location whose device says it is), identities are random, guesses and reports are
/// counted, and new accounts invite only players they met both ways.
@Suite struct FairPlayTests {
    private static let deployment = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    private func sighting(_ beacon: BeaconIdentity, at time: Date) -> EncounterReport {
        EncounterReport(beacon, distance: 1, at: time)
    }

    private func sighting(major: Int, minor: Int, at time: Date) -> EncounterReport {
        EncounterReport(BeaconIdentity(uuid: Self.deployment, major: major, minor: minor)!, distance: 1, at: time)
    }

    @Test func identitiesAreDrawnAtRandomNotInSequence() async throws {
        let lobby = try await TestLobby()
        var identities: [Int] = []
        for i in 0..<24 {
            let player = try await lobby.player("player\(i)").player
            #expect(player.beacon.major >= 1, "major 0 is the locations'")
            identities.append(player.beacon.major << 16 | player.beacon.minor)
        }
        let sorted = identities.sorted()
        let neighbours = zip(sorted, sorted.dropFirst()).filter { $1 - $0 == 1 }.count
        #expect(neighbours == 0, "consecutive identities: \(sorted)")
        #expect(Set(identities.map { $0 >> 16 }).count >= 20, "majors: \(identities.map { $0 >> 16 })")
    }

    @Test func aPlayerOffTheAirCannotBeReportedOrResolved() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        lobby.clock.advance(by: 11 * 60)
        // Bob's agent has not spoken to the lobby for 11 minutes: nobody can be hearing it.
        let heard = try await lobby.store.recordEncounters(reporter: alice, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())])
        #expect(heard.recorded == 0 && heard.ignored == 1)
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: (try await lobby.beacon(of: "bob")))
        }
        #expect(error?.kind == .notFound)
        // Bob's agent speaks (any authenticated request): he is on the air again.
        lobby.store.noteActive(bob)
        #expect(try await lobby.store.recordEncounters(reporter: alice, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())]).recorded == 1)
        #expect(try await lobby.store.resolve(viewer: alice, beacon: (try await lobby.beacon(of: "bob"))).username == "bob")
    }

    @Test func activityIsWrittenDownForOtherProcessesOfTheSameDatabase() async throws {
        let lobby = try await TestLobby()
        let (bob, _) = try await lobby.player("bob")
        lobby.clock.advance(by: 30 * 60)
        lobby.store.noteActive(bob)
        try await lobby.store.expireInvitations()  // any write carries the activity along
        let written = try await lobby.store.database.read { db in try db.fetchValue(Double.self, "SELECT activeAt FROM player WHERE id = ?", bob) }
        #expect(written == lobby.clock.now().timeIntervalSince1970)
    }

    @Test func identitiesThatLeadNowhereSpendGuessesThenOnlyMetPlayersCount() async throws {
        let lobby = try await TestLobby { $0.identityGuessesPerHour = 5 }
        let (alice, _) = try await lobby.player("alice")
        let (bob, bobPlayer) = try await lobby.player("bob")
        let (carol, carolPlayer) = try await lobby.player("carol")
        #expect(try await lobby.store.recordEncounters(reporter: alice, [sighting((try await lobby.beacon(of: "carol")), at: lobby.clock.now())]).recorded == 1)
        // Five made-up identities spend the five guesses.
        let walk = (0..<5).map { sighting(major: 1, minor: $0, at: lobby.clock.now()) }
        let taken = Set([(try await lobby.beacon(of: "bob")), (try await lobby.beacon(of: "carol"))].map { $0.major << 16 | $0.minor })
        #expect(walk.allSatisfy { !taken.contains($0.beacon.major << 16 | $0.beacon.minor) })
        #expect(try await lobby.store.recordEncounters(reporter: alice, walk).ignored == 5)
        // With none left, a player alice never met is not recorded, one she met still is.
        let after = try await lobby.store.recordEncounters(reporter: alice, [
            sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now()), sighting((try await lobby.beacon(of: "carol")), at: lobby.clock.now()),
        ])
        #expect(after.recorded == 1 && after.ignored == 1)
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: alice, beacon: (try await lobby.beacon(of: "bob")))
        }
        #expect(error?.kind == .throttled && error?.code == .tooManyUnknownIdentities && (error?.retryAfter ?? 0) >= 1)
        #expect(try await lobby.store.resolve(viewer: alice, beacon: (try await lobby.beacon(of: "carol"))).username == "carol")
        // An hour later the guesses are back.
        lobby.clock.advance(by: 3600)
        lobby.store.noteActive(bob)
        lobby.store.noteActive(carol)
        #expect(try await lobby.store.recordEncounters(reporter: alice, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())]).recorded == 1)
    }

    @Test func reportsAndResolutionsAreRateLimitedPerPlayer() async throws {
        let lobby = try await TestLobby { $0.encounterReportsPerMinute = 3; $0.resolutionsPerMinute = 3 }
        let (alice, _) = try await lobby.player("alice")
        let (mallory, _) = try await lobby.player("mallory")
        let (_, bob) = try await lobby.player("bob")
        for _ in 0..<3 { _ = try await lobby.store.recordEncounters(reporter: mallory, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())]) }
        let error = await #expect(throws: LobbyError.self) {
            try await lobby.store.recordEncounters(reporter: mallory, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())])
        }
        #expect(error?.kind == .throttled && error?.code == .tooManyReports && error?.retryAfter == 20)
        // Another player is not held by mallory's rate.
        #expect(try await lobby.store.recordEncounters(reporter: alice, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())]).recorded == 1)
        lobby.clock.advance(by: 20)
        #expect(try await lobby.store.recordEncounters(reporter: mallory, [sighting((try await lobby.beacon(of: "bob")), at: lobby.clock.now())]).recorded == 1)
        for _ in 0..<3 { _ = try await lobby.store.resolve(viewer: mallory, beacon: (try await lobby.beacon(of: "bob"))) }
        let resolving = await #expect(throws: LobbyError.self) {
            try await lobby.store.resolve(viewer: mallory, beacon: (try await lobby.beacon(of: "bob")))
        }
        #expect(resolving?.code == .tooManyResolutions)
    }

    @Test func aLocationWhoseDeviceIsOffTheAirProvesNoPresence() async throws {
        let lobby = try await TestLobby()
        let (owner, _) = try await lobby.player("owner")
        let (player, _) = try await lobby.player("player")
        let location = try await lobby.store.registerLocation(owner, name: "Hall").location
        let tournament = try #require(location.tournaments.first)
        lobby.clock.advance(by: 11 * 60)
        // Even the identity it advertises now proves nothing unless the device is on the air.
        let here = try #require(try await lobby.store.currentLocationBeacon(location.id, at: lobby.clock.now()))
        let replayed = try await lobby.store.recordEncounters(reporter: player, [
            EncounterReport(here, distance: 2, at: lobby.clock.now()),
        ])
        #expect(replayed.recorded == 0)
        let refused = await #expect(throws: LobbyError.self) { try await lobby.store.joinTournament(player, tournament: tournament.id) }
        #expect(refused?.code == .notNearLocation)
        // Only the owner's session may say the device is on the air.
        let stranger = await #expect(throws: LobbyError.self) { try await lobby.store.markOnAir(player, location: location.id) }
        #expect(stranger?.kind == .notFound)
        try await lobby.store.markOnAir(owner, location: location.id)
        let heard = try await lobby.store.recordEncounters(reporter: player, [
            EncounterReport(here, distance: 2, at: lobby.clock.now()),
        ])
        #expect(heard.recorded == 1)
        #expect(try await lobby.store.joinTournament(player, tournament: tournament.id).created)
    }

    @Test func newAccountsInviteOnlyPlayersTheyMetBothWays() async throws {
        let lobby = try await TestLobby { $0.newAccountAge = 7 * 86400 }
        let (alice, _) = try await lobby.player("alice")
        let (bob, _) = try await lobby.player("bob")
        try await lobby.see(alice, "bob")
        let oneWay = await #expect(throws: LobbyError.self) { try await lobby.store.invite(alice, usernames: ["bob"]) }
        #expect(oneWay?.excluded == [ExcludedInvitee(username: "bob", reason: .notNearby)])
        try await lobby.see(bob, "alice")
        #expect(try await lobby.store.invite(alice, usernames: ["bob"]).invitees.map(\.username) == ["bob"])
    }

    @Test func throwAwayAccountsCannotMakeAPlayerUninvitable() async throws {
        let lobby = try await TestLobby { $0.newAccountAge = 86400; $0.maximumOpenInvitations = 3 }
        let (victim, _) = try await lobby.player("victim")
        let (friend, _) = try await lobby.player("friend")
        lobby.clock.advance(by: 2 * 86400)
        // Four new accounts, even ones that met the victim both ways, fill only the new
        // accounts' slots.
        var refused: [ExcludedInvitee.Reason] = []
        for i in 0..<4 {
            let (sybil, _) = try await lobby.player("sybil\(i)")
            try await lobby.see(sybil, "victim")
            try await lobby.see(victim, "sybil\(i)")
            do {
                _ = try await lobby.store.invite(sybil, usernames: ["victim"])
            } catch let error as LobbyError {
                refused += error.excluded.map(\.reason)
            }
        }
        #expect(refused == [.invitationLimitReached])
        // An established account still invites the victim (met one way is enough for it).
        try await lobby.see(friend, "victim")
        #expect(try await lobby.store.invite(friend, usernames: ["victim"]).invitees.map(\.username) == ["victim"])
    }

    @Test func photosAreForPlayersWhoMetTheirOwner() async throws {
        let lobby = try await TestLobby()
        let (alice, _) = try await lobby.player("alice")
        let (mallory, _) = try await lobby.player("mallory")
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 32)
        _ = try await lobby.store.setPhoto(alice, bytes: Data(png))
        #expect(try await lobby.store.photo(viewer: alice, username: "alice").bytes == Data(png))
        let hidden = await #expect(throws: LobbyError.self) { try await lobby.store.photo(viewer: mallory, username: "alice") }
        #expect(hidden?.code == .photoNotFound)
        try await lobby.see(mallory, "alice")
        #expect(try await lobby.store.photo(viewer: mallory, username: "alice").bytes == Data(png))
    }

    /// A database from before issue 21 (identities in sequence, e-mail addresses unique): every
    /// player gets a random identity, the rows that point at players still do, and an address may
    /// be registered again.
    @Test func theMigrationDrawsNewIdentitiesAndKeepsEveryReference() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fair-play-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lobby.sqlite").path
        try Self.makeDatabaseBeforeIssue21(at: path)
        let store = try LobbyStore(path: path, configuration: LobbyConfiguration(bcryptCost: 4))
        let rows = try await store.grdbPool.read { try Row.fetchAll($0, sql: "SELECT id, beaconMajor, beaconMinor FROM player ORDER BY id") }
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { ($0["beaconMajor"] as Int) >= 1 })
        #expect(!(rows.map { $0["beaconMajor"] as Int } == [1, 1, 1] && rows.map { $0["beaconMinor"] as Int } == [0, 1, 2]))
        let references = try await store.grdbPool.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM encounter WHERE observerId = 1 AND seenId = 2"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM block WHERE blockerId = 3 AND blockedId = 1"),
             try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count)
        }
        #expect(references.0 == 1 && references.1 == 1 && references.2 == 0)
        let again = try await store.register(Registration(username: "newcomer", firstName: "N", lastName: "C", email: "old0@example.org", password: "password-123"))
        #expect(again.username == "newcomer")
        try store.close()
    }

    private static func makeDatabaseBeforeIssue21(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try LobbyMigrations.migrator.migrate(queue, upTo: "v7-username-skeletons")
        try queue.write { db in
            for i in 0..<3 {
                try db.execute(sql: """
                    INSERT INTO player (username, firstName, lastName, email, passwordHash, beaconMajor, beaconMinor, photoVersion, createdAt, usernameSkeleton)
                    VALUES (?, 'F', 'L', ?, 'x', 1, ?, 0, 0, ?)
                    """, arguments: ["old\(i)", "old\(i)@example.org", i, "old\(i)"])
            }
            try db.execute(sql: "INSERT INTO encounter (observerId, seenId, lastSeenAt) VALUES (1, 2, 0)")
            try db.execute(sql: "INSERT INTO block (blockerId, blockedId, createdAt) VALUES (3, 1, 0)")
        }
    }
}
