import Foundation
import GRDB
import Minigames
import SensorSamples
import SystemSupport
import Testing
@testable import Lobby

/// The hand-written encodings must say exactly what the generic ones would.
@Suite struct EncodingTests {
    /// The server's JSONEncoder: sorted keys, ISO 8601 with milliseconds.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    func expectSameJSON<T: Encodable & JSONWritable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = String(decoding: try Self.encoder.encode(value), as: UTF8.self)
        let written = String(decoding: JSONWriter.encode(value), as: UTF8.self)
        #expect(written == expected, sourceLocation: sourceLocation)
    }

    static let awkward = ["alice", "Bob", "aB", "a_b", "p10", "p9", "é", "quote\"back\\slash/", "ctl\u{1}\u{8}\u{c}\n\r\t\u{1f}", "\u{2028}😀"]
    static let dates: [Date] = [0, 1.9999, 1_800_000_000.1239, -1.5, 1_763_790_000.0005, 1_763_790_000.9996, 4_102_444_799.5, 951_782_400.25]
        .map(Date.init(timeIntervalSince1970:))

    @Test func profilesAndStatistics() throws {
        for (index, name) in Self.awkward.enumerated() {
            let stats = PlayerStats(
                spanDays: [30, 0.5, 1e-3, 12345.678][index % 4], gamesPlayed: index, gamesWon: -index, gamesLost: Int.max,
                gamesDrawn: Int.min, roundsWon: 0, bestScore: index.isMultiple(of: 2) ? nil : 512)
            try expectSameJSON(stats)
            try expectSameJSON(PublicProfile(
                username: name, firstName: "Ada \(name)", lastName: "", photoURL: index.isMultiple(of: 3) ? nil : "/v1/players/\(name)/photo?v=2",
                stats: stats,
                radioOffsets: index.isMultiple(of: 2) ? nil : RadioOffsets(
                    transmit: [-7.25, 0, 30][index % 3], receive: 3.125, transmitError: 0.4, receiveError: 6,
                    pairs: index, solvedAt: Self.dates[index % Self.dates.count])))
        }
    }

    @Test func invitations() throws {
        for (index, date) in Self.dates.enumerated() {
            let invitees = Self.awkward.prefix(index).enumerated().map { offset, name in
                Invitation.Invitee(username: name, response: [.pending, .accepted, .declined, .expired][offset % 4])
            }
            let excluded = Self.awkward.suffix(index % 3).map { ExcludedInvitee(username: $0, reason: .notNearby) }
            try expectSameJSON(Invitation(
                id: Int64(index) * 1_000_003, inviter: Self.awkward[index % Self.awkward.count], invitees: invitees,
                excluded: excluded, state: .pending, createdAt: date, expiresAt: date.addingTimeInterval(86400)))
        }
    }

    @Test func games() throws {
        for (index, date) in Self.dates.enumerated() {
            let players = Array(Self.awkward.prefix(index + 1))
            let rounds = (1...3).map { n in
                LobbyGame.Round(
                    n: n, game: ["shaker", "quickdraw", "statue"][n - 1], duration: [10, 8, 9.75][n - 1],
                    signalTime: n == 2 ? [2.000001, 4.999999999, 3.1415926535897931][index % 3] : nil,
                    scores: Dictionary(uniqueKeysWithValues: players.enumerated().map { ($1, $0 * 100 - n) }),
                    winner: n == 2 ? nil : players.last)
            }
            try expectSameJSON(LobbyGame(
                id: Int64(index), state: index.isMultiple(of: 2) ? .open : .finished, inviter: players[0], participants: players,
                rounds: index == 0 ? [] : rounds, winner: index.isMultiple(of: 2) ? nil : players[0], createdAt: date,
                finishedAt: index.isMultiple(of: 2) ? nil : date.addingTimeInterval(61.5)))
        }
    }

    @Test func eventPayloadsDecodeBack() throws {
        let payloads = [
            EventData(),
            EventData(game: 7, player: "bob"),
            EventData(game: 7, player: "bob", response: .declined),
            EventData(game: 9, round: 2, scores: ["alice": 3, "Bob": 512, "p10": 0]),
            EventData(game: 9, winner: "quote\"back\\slash/"),
            EventData(player: "ctl\u{1}\n", persistent: true),
            EventData(player: "x", persistent: false),
            EventData(game: 3, participants: ["alice", "quote\"", "é"], rounds: [
                PlannedRound(n: 1, game: "quickdraw", duration: 8, signalTime: 2.718281828459045),
                PlannedRound(n: 2, game: "statue", duration: 10),
                PlannedRound(n: 3, game: "screamer", duration: 5.5, signalTime: 1e-7),
            ]),
            EventData(game: 4, participants: [], rounds: []),
        ]
        for payload in payloads {
            try expectSameJSON(payload)
            #expect(try JSONDecoder().decode(EventData.self, from: Data(JSONWriter.encode(payload))) == payload)
        }
    }

    /// Records read columns by position: the tables must keep the order the records expect.
    /// On SQLite; PostgresSchemaTests holds PostgreSQL's schema to SQLite's, column by column.
    @Test func recordColumnsMatchTheSchema() async throws {
        let lobby = try await TestLobby(engine: .sqlite)
        let tables: [(String, String)] = [
            (BlockRecord.databaseTableName, BlockRecord.columns), (EncounterRecord.databaseTableName, EncounterRecord.columns),
            (EventRecord.databaseTableName, EventRecord.columns), (GameRecord.databaseTableName, GameRecord.columns),
            (MembershipRecord.databaseTableName, MembershipRecord.columns), (PhotoRecord.databaseTableName, PhotoRecord.columns),
            (PlayerRecord.databaseTableName, PlayerRecord.columns), (RoundRecord.databaseTableName, RoundRecord.columns),
            (ScoreRecord.databaseTableName, ScoreRecord.columns), (SessionRecord.databaseTableName, SessionRecord.columns),
            (UnlockRecord.databaseTableName, UnlockRecord.columns),
        ]
        try await lobby.store.grdbPool.read { db in
            for (table, columns) in tables {
                let actual = try db.columns(in: table).map(\.name).joined(separator: ", ")
                #expect(actual == columns, "table \(table)")
            }
        }
    }

    /// Times are stored as numbers, so that comparisons with `unixTime` arguments work.
    @Test func timesAreStoredAsSecondsSince1970() async throws {
        let lobby = try await TestLobby()
        let ids = try await lobby.players("alice", "bob")
        try await lobby.see(ids[0], "bob")
        _ = try await lobby.store.invite(ids[0], usernames: ["bob"])
        let value = try #require(try await lobby.store.database.read { db in try db.fetchOne("SELECT createdAt FROM game") })[0]
        // A REAL on SQLite, a DOUBLE PRECISION on PostgreSQL: a number either way, never text.
        guard case .real = value else { Issue.record("createdAt is stored as \(value), not a real number"); return }
        #expect(value == .real(lobby.clock.now().timeIntervalSince1970))
    }
}

extension EncodingTests {
    /// Stored recordings: every minigame's, with and without a calibration and a signal time.
    @Test func recordings() throws {
        let calibrated = SensorCalibration(
            microphone: MicrophoneCalibration(pcm: "file:\"mic\"/a", noiseFloorDBFS: -61.25),
            accelerometer: AccelerometerCalibration(device: "iio:device0", rest: [0.01, -0.2, 9.81], gravity: 9.80665, noise: 0.0123))
        var compared = 0
        for (index, game) in ([.screamer, .shaker, .statue, .quickdraw] as [MinigameName]).enumerated() {
            for calibration in [SensorCalibration(), calibrated] {
                // Not every score is reachable under every calibration; those that are suffice.
                guard let recording = SyntheticRecording.scoring(
                    100 + 150 * index, game: game, duration: 5 + Double(index), signalTime: game == "quickdraw" ? 2.5 : nil,
                    calibration: calibration) else { continue }
                try expectSameJSON(recording)
                compared += 1
            }
        }
        #expect(compared >= 6)
        var odd = RoundRecording(game: "statue", duration: 1e-7, signalTime: 1e21)
        odd.levels = [LevelSample(time: -0.0, rmsDBFS: -120.5, peakDBFS: 0, overruns: 3)]
        odd.accelerations = [AccelerationSample(time: 0.1, x: .ulpOfOne, y: -1e-300, z: 123456789.125)]
        try expectSameJSON(odd)
    }

    /// Error codes, states and responses are raw-value types: the wire and the database see the
    /// same words as when they were string literals.
    @Test func codesAndStatesKeepTheirWords() throws {
        #expect(String(decoding: try Self.encoder.encode(LobbyError.Code.usernameTaken), as: UTF8.self) == "\"usernameTaken\"")
        #expect(LobbyError(.conflict, .gameNotOpen, "m").description == "gameNotOpen: m")
        #expect(GameState.open.sqlLiteral == "'open'")
        #expect([InvitationResponse.pending, .accepted].sqlList == "('pending', 'accepted')")
        #expect(TournamentState.closed.sqlLiteral == "'closed'" && GameOutcome.draw.sqlLiteral == "'draw'")
    }
}
